import { chmod, lchown, lstat, mkdir, readFile, readdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runDetached } from '../sandbox/run-detached.js';
import { formatBytes } from './build-disk.js';

/**
 * Frameworks' and tools' build caches: never part of a release (release-packer skips them), kept
 * per application between builds. Relative to the project.
 */
export const BUILD_CACHE_PATHS = [
  '.next/cache',
  'node_modules/.cache',
  'node_modules/.vite',
  '.svelte-kit',
  '.nuxt',
  '.astro',
  '.turbo',
  '.parcel-cache',
  '.angular/cache',
] as const;

/** Whether a project path is (inside) a build cache: such paths are never packed. */
export function isBuildCache(path: string): boolean {
  return BUILD_CACHE_PATHS.some((cache) => path === cache || path.startsWith(`${cache}/`));
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `path` (relative) inside `project` when each of its components is a real directory (no link); else null. */
export async function realDirectory(project: string, path: string): Promise<string | null> {
  let current = project;
  for (const part of path.split('/')) {
    current = join(current, part);
    const info = await lstat(current).catch(() => null);
    if (!info || info.isSymbolicLink() || !info.isDirectory()) return null;
  }
  return current;
}
const slot = (path: string) => path.replace(/\//g, '%');
/** Per application: the bytes its kept caches hold; its modification time is when they were last used. */
const SIZE_FILE = '.size';

/** Bytes of the regular files under `dir` (never following a link), or null once they pass `limit`. */
export async function treeBytes(dir: string, limit: number): Promise<number | null> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) total += (await lstat(path)).size;
      if (total > limit) return null;
    }
  }
  return total;
}

/**
 * Moves a tree; across file systems (the workspace on its build disk, the kept caches on the
 * host's) copies it with `cp -a` (links stay links, nothing is followed; ownership and modes
 * kept) and leaves the source. A copy that fails is removed; ENOSPC is passed on as such.
 */
async function transfer(from: string, to: string, move: boolean): Promise<void> {
  if (move) {
    const moved = await rename(from, to).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV') throw error;
        return false;
      },
    );
    if (moved) return;
  }
  const { code, stderr } = await runDetached('cp', ['-a', '--no-target-directory', from, to]);
  if (code === 0) return;
  await rm(to, { recursive: true, force: true });
  throw Object.assign(new Error(`cp -a failed: ${stderr || `exit ${code}`}`), /No space left|Disk quota/i.test(stderr) ? { code: 'ENOSPC' } : {});
}

export interface BuildCacheBudget {
  /** Bytes one application's caches may hold together (BUILD_CACHE_APP_MAX_BYTES): more, and none are kept. */
  appMaxBytes: number;
  /** Bytes every application's caches may hold together (BUILD_CACHES_MAX_BYTES): least recently used applications' go first. */
  maxBytes: number;
}

/**
 * Build caches per application, between the workspace and `<root>/<applicationId>/` (root-only):
 * after a build each cache directory is taken out of the project, before the next build of the
 * same application put back. On one file system they are renamed; from a build disk (its own
 * file system) they are copied with `cp -a`, which never follows a link, and the kept copy stays
 * until the next build replaces it. A cache only ever returns to the application whose sandboxed
 * build wrote it, so its content needs no verification; every component of its path must be a
 * real directory (no link), checked once the build's processes are gone, so a project cannot make
 * the worker move anything but its own files. Bounded: one application's caches at most
 * `appMaxBytes` (a build that leaves more keeps none), all of them at most `maxBytes` (least
 * recently used applications' go first), so one application cannot fill the host for everyone.
 */
export class BuildCaches {
  constructor(
    private readonly root: string,
    private readonly budget: BuildCacheBudget = { appMaxBytes: 1024 ** 3, maxBytes: 4 * 1024 ** 3 },
  ) {}

  private async appDir(applicationId: string): Promise<string> {
    if (!SAFE_ID.test(applicationId)) throw new Error(`unexpected application id ${JSON.stringify(applicationId)}`);
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    await chmod(this.root, 0o700);
    const dir = join(this.root, applicationId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Moves the application's kept caches back into the project (before its build); returns what was restored. */
  async restore(applicationId: string, project: string, owner?: { uid: number; gid: number }): Promise<string[]> {
    const dir = await this.appDir(applicationId);
    const restored: string[] = [];
    for (const path of BUILD_CACHE_PATHS) {
      const kept = join(dir, slot(path));
      if (!(await lstat(kept).catch(() => null))?.isDirectory()) continue;
      const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
      // The parent must exist as a real directory (node_modules after install; `.next` is made here).
      if ((parent === '.next' || parent === '.angular') && !(await lstat(join(project, parent)).catch(() => null))) {
        await mkdir(join(project, parent));
        // The build user's, like the rest of the workspace.
        if (owner) await lchown(join(project, parent), owner.uid, owner.gid);
      }
      const target = parent ? await realDirectory(project, parent) : project;
      if (!target || (await lstat(join(project, path)).catch(() => null))) continue;
      // A full build disk fails the deploy (build_disk_exceeded); anything else only costs the cache.
      const back = await transfer(kept, join(project, path), true).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOSPC') throw error;
          return false;
        },
      );
      if (back) restored.push(path);
    }
    if (restored.length) await this.touch(dir);
    return restored;
  }

  /** An empty cache directory (each missing component made for `owner`) where none was kept, when the project has none of its own. */
  async prepare(project: string, path: (typeof BUILD_CACHE_PATHS)[number], owner?: { uid: number; gid: number }): Promise<void> {
    let current = project;
    for (const part of path.split('/')) {
      current = join(current, part);
      const info = await lstat(current).catch(() => null);
      if (info && (info.isSymbolicLink() || !info.isDirectory())) return;
      if (!info) {
        await mkdir(current);
        if (owner) await lchown(current, owner.uid, owner.gid);
      }
    }
  }

  /**
   * Takes the build caches out of the project (after its build, before packing) and keeps them,
   * replacing what was kept, within the budget; `notKept` says why none were.
   */
  async keep(applicationId: string, project: string): Promise<{ kept: string[]; notKept?: string }> {
    const dir = await this.appDir(applicationId);
    const found: { path: string; source: string }[] = [];
    for (const path of BUILD_CACHE_PATHS) {
      const source = await realDirectory(project, path);
      if (source) found.push({ path, source });
    }
    const limit = Math.min(this.budget.appMaxBytes, this.budget.maxBytes);
    let bytes = 0;
    for (const { source } of found) {
      const size = await treeBytes(source, limit - bytes);
      bytes = size === null ? limit + 1 : bytes + size;
      if (size === null) break;
    }
    let notKept: string | undefined;
    if (found.length && bytes > limit) {
      notKept = `they hold more than the ${formatBytes(limit)} one application may keep (BUILD_CACHE_APP_MAX_BYTES)`;
      found.length = 0;
    }
    const kept: string[] = [];
    for (const path of BUILD_CACHE_PATHS) {
      // A cache the build no longer made (or one over the budget) is dropped, not kept stale.
      const target = join(dir, slot(path));
      await this.drop(dir, target);
      const source = found.find((entry) => entry.path === path)?.source;
      if (!source) continue;
      // Out of the project either way: the release never ships it.
      const temp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
      const copied = await transfer(source, temp, true).then(
        () => true,
        async (error: Error) => {
          notKept = `${path} could not be kept (${error.message})`;
          return false;
        },
      );
      await rm(source, { recursive: true, force: true });
      if (!copied) continue;
      await rename(temp, target);
      kept.push(path);
    }
    await writeFile(join(dir, SIZE_FILE), String(kept.length ? bytes : 0), { mode: 0o600 });
    await this.evict(applicationId);
    return notKept ? { kept, notKept } : { kept };
  }

  /** Marks an application's caches as just used (least recently used go first). */
  private async touch(dir: string): Promise<void> {
    const now = new Date();
    await utimes(join(dir, SIZE_FILE), now, now).catch(() => undefined);
  }

  /** Keeps every application's caches together under `maxBytes`: the least recently used applications' go first. */
  async evict(current?: string): Promise<void> {
    const apps: { dir: string; used: number; bytes: number }[] = [];
    for (const name of await readdir(this.root).catch(() => [] as string[])) {
      if (!SAFE_ID.test(name) || name === current) continue;
      const dir = join(this.root, name);
      const size = join(dir, SIZE_FILE);
      const info = await lstat(size).catch(() => null);
      // Caches of an older version (no size recorded) count as over any budget.
      const bytes = info ? Number(await readFile(size, 'utf8').catch(() => 'NaN')) : NaN;
      apps.push({ dir, used: info?.mtimeMs ?? 0, bytes: Number.isFinite(bytes) ? bytes : Infinity });
    }
    apps.sort((a, b) => b.used - a.used);
    let total = current ? Number(await readFile(join(this.root, current, SIZE_FILE), 'utf8').catch(() => '0')) || 0 : 0;
    for (const app of apps) {
      if (total + app.bytes <= this.budget.maxBytes) {
        total += app.bytes;
        continue;
      }
      for (const name of await readdir(app.dir).catch(() => [] as string[])) await rm(join(app.dir, name), { recursive: true, force: true });
    }
  }

  private async drop(dir: string, target: string): Promise<void> {
    if (!(await lstat(target).catch(() => null))) return;
    const trash = join(dir, `.trash-${randomBytes(6).toString('hex')}`);
    await rename(target, trash);
    await rm(trash, { recursive: true, force: true });
  }

  /** Forgets an application's caches. */
  async clear(applicationId: string): Promise<void> {
    const dir = await this.appDir(applicationId);
    for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
  }
}
