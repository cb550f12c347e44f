import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildCaches, isBuildCache } from './build-caches.js';

describe('build caches kept per application (real files)', () => {
  let base: string;
  let caches: BuildCaches;
  let n = 0;
  const project = async () => {
    const dir = join(base, `project-${++n}`);
    await mkdir(join(dir, 'node_modules'), { recursive: true });
    return dir;
  };

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'build-caches-spec-'));
    caches = new BuildCaches(join(base, 'kept'));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('moves the caches out after a build and back before the next build of the same application only', async () => {
    const first = await project();
    await mkdir(join(first, '.next', 'cache', 'images'), { recursive: true });
    await writeFile(join(first, '.next', 'cache', 'images', 'a'), 'next');
    await mkdir(join(first, 'node_modules', '.cache', 'babel'), { recursive: true });
    await writeFile(join(first, 'node_modules', '.cache', 'babel', 'b'), 'babel');
    await mkdir(join(first, '.svelte-kit'));
    expect((await caches.keep('app-a', first)).kept.sort()).toEqual(['.next/cache', '.svelte-kit', 'node_modules/.cache']);
    // Gone from the project: the release cannot ship them.
    for (const path of ['.next/cache', 'node_modules/.cache', '.svelte-kit']) await expect(lstat(join(first, path))).rejects.toThrow();

    expect(await caches.restore('app-b', await project())).toEqual([]);
    const next = await project();
    expect((await caches.restore('app-a', next)).sort()).toEqual(['.next/cache', '.svelte-kit', 'node_modules/.cache']);
    expect(await readFile(join(next, '.next', 'cache', 'images', 'a'), 'utf8')).toBe('next');
    expect(await readFile(join(next, 'node_modules', '.cache', 'babel', 'b'), 'utf8')).toBe('babel');
  });

  it('never moves what a link leads to: a cache path through a link, or a cache that is a link, is left alone', async () => {
    const outside = join(base, 'outside');
    await mkdir(join(outside, 'cache'), { recursive: true });
    await writeFile(join(outside, 'cache', 'secret'), 'host file');
    const dir = await project();
    await symlink(outside, join(dir, '.next'));
    await symlink(join(outside, 'cache'), join(dir, 'node_modules', '.cache'));
    expect((await caches.keep('app-links', dir)).kept).toEqual([]);
    expect(await readFile(join(outside, 'cache', 'secret'), 'utf8')).toBe('host file');
    expect(await readdir(join(base, 'kept', 'app-links'))).toEqual([]);
  });

  it('does not replace what the upload already holds, and restores into node_modules only when it is a real directory', async () => {
    const dir = await project();
    await mkdir(join(dir, 'node_modules', '.cache'));
    await writeFile(join(dir, 'node_modules', '.cache', 'x'), 'kept');
    await caches.keep('app-c', dir);
    const linked = join(base, 'linked-project');
    await mkdir(linked);
    await mkdir(join(base, 'elsewhere'));
    await symlink(join(base, 'elsewhere'), join(linked, 'node_modules'));
    expect(await caches.restore('app-c', linked)).toEqual([]);
    expect(await readdir(join(base, 'elsewhere'))).toEqual([]);
  });

  it('prepares an empty cache directory where none was kept, never through a link', async () => {
    const dir = await project();
    await caches.prepare(dir, '.next/cache');
    expect((await lstat(join(dir, '.next', 'cache'))).isDirectory()).toBe(true);
    const linked = await project();
    await mkdir(join(base, 'prep-outside'));
    await symlink(join(base, 'prep-outside'), join(linked, '.next'));
    await caches.prepare(linked, '.next/cache');
    expect(await readdir(join(base, 'prep-outside'))).toEqual([]);
  });

  it('names what is never packed', () => {
    expect(['.next/cache', '.next/cache/x', 'node_modules/.cache/y', '.svelte-kit/output'].every(isBuildCache)).toBe(true);
    expect(['.next/static/a.js', '.next/server', 'node_modules/cache', 'src/.next/cache'].some(isBuildCache)).toBe(false);
  });
});
