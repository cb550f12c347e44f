import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildCaches, isBuildCache } from './build-caches.js';
import { BuildDisks, type BuildDisk } from './build-disk.js';

const canMount = process.getuid?.() === 0 && existsSync('/dev/loop-control') && spawnSync('sh', ['-c', 'command -v mkfs.ext4']).status === 0;
if (!canMount) console.warn('build-caches.spec: the tests across a build disk are skipped: they need root, loop devices and e2fsprogs');

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
    expect((await readdir(join(base, 'kept', 'app-links'))).filter((name) => name !== '.size')).toEqual([]);
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

  it('keeps one application within its budget: a build that leaves more keeps none, and says why', async () => {
    const budgeted = new BuildCaches(join(base, 'kept-budget'), { appMaxBytes: 10_000, maxBytes: 1_000_000 });
    const dir = await project();
    await mkdir(join(dir, '.next', 'cache'), { recursive: true });
    await writeFile(join(dir, '.next', 'cache', 'small'), Buffer.alloc(4000));
    expect((await budgeted.keep('app-budget', dir)).kept).toEqual(['.next/cache']);
    const over = await project();
    await mkdir(join(over, '.next', 'cache'), { recursive: true });
    await mkdir(join(over, 'node_modules', '.cache'), { recursive: true });
    await writeFile(join(over, '.next', 'cache', 'a'), Buffer.alloc(6000));
    await writeFile(join(over, 'node_modules', '.cache', 'b'), Buffer.alloc(6000));
    expect(await budgeted.keep('app-budget', over)).toEqual({
      kept: [],
      notKept: 'they hold more than the 10000 bytes one application may keep (BUILD_CACHE_APP_MAX_BYTES)',
    });
    // Neither the old nor the new ones are kept (the packer never packs them either way).
    expect(await budgeted.restore('app-budget', await project())).toEqual([]);
  });

  it('keeps every application together under the total, dropping the least recently used application first', async () => {
    const kept = join(base, 'kept-total');
    const shared = new BuildCaches(kept, { appMaxBytes: 10_000, maxBytes: 10_000 });
    const keepAged = async (app: string, minutesAgo: number) => {
      const dir = await project();
      await mkdir(join(dir, '.turbo'));
      await writeFile(join(dir, '.turbo', 'x'), Buffer.alloc(4000));
      await shared.keep(app, dir);
      const when = new Date(Date.now() - minutesAgo * 60_000);
      await utimes(join(kept, app, '.size'), when, when);
    };
    await keepAged('app-old', 30);
    await keepAged('app-used', 20);
    // app-used's caches were used since: app-old is the least recently used.
    expect(await shared.restore('app-used', await project())).toEqual(['.turbo']);
    await keepAged('app-used', 1);
    await keepAged('app-new', 0);
    expect(await shared.restore('app-old', await project())).toEqual([]);
    expect(await shared.restore('app-new', await project())).toEqual(['.turbo']);
  });

  (canMount ? describe : describe.skip)('across a build disk (its own file system, as root)', () => {
    let disks: BuildDisks;
    let disk: BuildDisk | undefined;
    beforeAll(() => {
      disks = new BuildDisks({ imagesDir: join(base, 'disks'), workspacesDir: join(base, 'workspaces'), sizeBytes: 64 * 1024 * 1024 });
    });
    afterEach(async () => {
      await disk?.release();
      disk = undefined;
    });

    it('copies the caches off the disk (links stay links, nothing followed) and back before the next build, keeping its copy', async () => {
      disk = await disks.mount('caches-1');
      const dir = join(disk.root, 'src');
      await mkdir(join(dir, '.next', 'cache', 'webpack'), { recursive: true });
      await writeFile(join(dir, '.next', 'cache', 'webpack', 'pack'), 'packed');
      await symlink('/etc/passwd', join(dir, '.next', 'cache', 'link'));
      expect((await caches.keep('app-disk', dir)).kept).toEqual(['.next/cache']);
      await expect(lstat(join(dir, '.next', 'cache'))).rejects.toThrow();
      await disk.release();

      disk = await disks.mount('caches-2');
      const next = join(disk.root, 'src');
      await mkdir(next);
      expect(await caches.restore('app-disk', next)).toEqual(['.next/cache']);
      expect(await readFile(join(next, '.next', 'cache', 'webpack', 'pack'), 'utf8')).toBe('packed');
      expect((await lstat(join(next, '.next', 'cache', 'link'))).isSymbolicLink()).toBe(true);
      // The kept copy stays (a failed build does not lose it).
      expect(await readdir(join(base, 'kept', 'app-disk'))).toContain('.next%cache');
    });

    it('passes a full build disk on as ENOSPC when restoring (the deploy fails with build_disk_exceeded)', async () => {
      const big = await project();
      await mkdir(join(big, '.turbo'));
      await writeFile(join(big, '.turbo', 'big'), Buffer.alloc(40 * 1024 * 1024, 1));
      expect((await caches.keep('app-full', big)).kept).toEqual(['.turbo']);
      disk = await disks.mount('caches-3');
      const dir = join(disk.root, 'src');
      await mkdir(dir);
      await writeFile(join(dir, 'filler'), Buffer.alloc(30 * 1024 * 1024));
      const error = await caches.restore('app-full', dir).catch((e: NodeJS.ErrnoException) => e);
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      await expect(lstat(join(dir, '.turbo'))).rejects.toThrow();
    });
  });
});
