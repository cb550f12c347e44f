import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveInTree, resolveLinkInTree } from './index.js';

describe('resolveInTree (real files and links)', () => {
  let base: string;
  let root: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'slipway-tree-'));
    root = join(base, 'tree');
    await mkdir(join(root, 'a', 'deep'), { recursive: true });
    await mkdir(join(base, 'outside'));
    await writeFile(join(root, 'a', 'deep', 'f.txt'), 'f');
    await symlink('a/deep', join(root, 'd'));
    await symlink('d/..', join(root, 'up-one'));
    await symlink('../../tree/a', join(root, 'a', 'back'));
    await symlink('../outside', join(root, 'out'));
    await symlink(join(root, 'a'), join(root, 'abs'));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('follows links as the kernel does while they stay inside', async () => {
    expect(await resolveInTree(root, [], 'd/f.txt')).toEqual({ kind: 'inside', segments: ['a', 'deep', 'f.txt'], exists: true });
    // `..` after a link is the parent of where the link leads, not of the link.
    expect(await resolveInTree(root, [], 'up-one')).toEqual({ kind: 'inside', segments: ['a'], exists: true });
    expect(await resolveInTree(root, ['a'], '../d/missing/x')).toEqual({ kind: 'inside', segments: ['a', 'deep', 'missing', 'x'], exists: false });
    expect(await resolveLinkInTree(root, ['d'])).toEqual({ kind: 'inside', segments: ['a', 'deep'], exists: true });
  });

  it('stops at the first step out of the tree, even one that would come back in', async () => {
    expect(await resolveInTree(root, [], '..')).toEqual({ kind: 'outside' });
    expect(await resolveInTree(root, [], 'out/anything')).toEqual({ kind: 'outside' });
    expect(await resolveInTree(root, [], 'abs')).toEqual({ kind: 'outside' });
    expect(await resolveInTree(root, [], '/etc')).toEqual({ kind: 'outside' });
    expect(await resolveLinkInTree(root, ['a', 'back'])).toEqual({ kind: 'outside' });
  });
});
