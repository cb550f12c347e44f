import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../args.js';
import { listSourceFiles } from './source-files.js';

describe('listSourceFiles (real file system)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-source-files-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const write = async (files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), content);
    }
  };
  const paths = async (includes?: string[]) => (await listSourceFiles(root, includes)).files.map((f) => f.path);

  it('sorts paths, sums sizes, and marks executables 0755', async () => {
    await write({ 'b.txt': 'bb', 'a/c.sh': 'ccc' });
    await chmod(join(root, 'a/c.sh'), 0o750);
    const listing = await listSourceFiles(root);
    expect(listing.files.map((f) => [f.path, f.mode, f.size])).toEqual([
      ['a/c.sh', 0o755, 3],
      ['b.txt', 0o644, 2],
    ]);
    expect(listing.totalBytes).toBe(5);
  });

  it('a deeper .gitignore overrides a shallower one, and anchored patterns stay in their folder', async () => {
    await write({
      '.gitignore': '*.map\n/build\n',
      'build/x.js': '',
      'web/build/y.js': '',
      'web/app.js.map': '',
      'web/.gitignore': '!app.js.map\n',
      'z.map': '',
    });
    expect(await paths()).toEqual(['.gitignore', 'web/.gitignore', 'web/app.js.map', 'web/build/y.js']);
  });

  it('never sends node_modules, .git, .env* or .slipway.json at any depth of node_modules/.git, unless included', async () => {
    await write({
      'node_modules/a/i.js': '',
      'pkg/node_modules/b/i.js': '',
      '.git/config': '',
      '.env': '',
      'api/.env.local': '',
      '.slipway.json': '{}',
      'ok.js': '',
    });
    expect(await paths()).toEqual(['ok.js']);
    expect(await paths(['**/.env.local', 'pkg/node_modules/b/'])).toEqual(['api/.env.local', 'ok.js', 'pkg/node_modules/b/i.js']);
  });

  it('sends links that stay inside as links (to a file, a folder, nothing yet), an absolute one inside as relative, and walks no linked folder', async () => {
    await write({ 'AGENTS.md': '# agents', 'packages/shared/util.js': 'x' });
    await symlink('AGENTS.md', join(root, 'CLAUDE.md'));
    await mkdir(join(root, 'apps/web'), { recursive: true });
    await symlink('../../packages/shared', join(root, 'apps/web/shared'));
    await symlink('dist/index.html', join(root, 'latest.html'));
    await symlink(join(root, 'AGENTS.md'), join(root, 'apps/web/AGENTS.md'));
    const listing = await listSourceFiles(root);
    expect(listing.files.map((f) => [f.path, f.link ?? null, f.size])).toEqual([
      ['AGENTS.md', null, 8],
      ['CLAUDE.md', 'AGENTS.md', 0],
      ['apps/web/AGENTS.md', '../../AGENTS.md', 0],
      ['apps/web/shared', '../../packages/shared', 0],
      ['latest.html', 'dist/index.html', 0],
      ['packages/shared/util.js', null, 1],
    ]);
    expect(listing.totalBytes).toBe(9);
    expect(listing.skipped).toEqual([]);
  });

  it('refuses, before anything is sent, every link that leads out or loops, with what to do', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'slipway-outside-'));
    try {
      await write({ 'index.html': 'x' });
      await writeFile(join(outside, 'secret.txt'), 'SECRET');
      await symlink(join(outside, 'secret.txt'), join(root, 'abs.txt'));
      await symlink('../../etc/hosts', join(root, 'hosts'));
      await symlink('me', join(root, 'me'));
      await mkdir(join(root, 'a'));
      await symlink('..', join(root, 'a/up'));
      await symlink('a/up/../..', join(root, 'b'));
      const error = await listSourceFiles(root).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        [
          '4 symbolic links cannot be sent: Slipway keeps links only when they stay inside the project folder',
          `  abs.txt -> ${join(outside, 'secret.txt')}: leads outside the project`,
          '  b -> a/up/../..: leads outside the project',
          '  hosts -> ../../etc/hosts: leads outside the project',
          '  me -> me: is in a loop of links',
          'Replace such a link with a copy of what it points to, or leave it out with .slipwayignore.',
        ].join('\n'),
      );
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('leaves out an ignored link without judging it', async () => {
    await write({ 'index.html': 'x', '.slipwayignore': 'hosts\n' });
    await symlink('../../etc/hosts', join(root, 'hosts'));
    expect(await paths()).toEqual(['.slipwayignore', 'index.html']);
  });
});
