import { chmod, lchown, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Frameworks' and tools' build caches: never part of a release (release-packer skips them), kept
 * per application between builds. Relative to the project.
 */
export const BUILD_CACHE_PATHS = ['.next/cache', 'node_modules/.cache', 'node_modules/.vite', '.svelte-kit', '.nuxt', '.astro', '.turbo', '.parcel-cache', '.angular/cache'] as const;

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

/**
 * Build caches per application, moved (never copied, never followed) between the workspace and
 * `<root>/<applicationId>/` (root-only): after a build each cache directory is renamed out of the
 * project, before the next build of the same application renamed back. A cache only ever returns
 * to the application whose sandboxed build wrote it, so its content needs no verification; every
 * component of its path must be a real directory (no link), checked once the build's processes
 * are gone, so a project cannot make the worker move anything but its own files.
 */
export class BuildCaches {
  constructor(private readonly root: string) {}

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
      await rename(kept, join(project, path));
      restored.push(path);
    }
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

  /** Moves the build caches out of the project (after its build, before packing); replaces what was kept. */
  async keep(applicationId: string, project: string): Promise<{ kept: string[] }> {
    const dir = await this.appDir(applicationId);
    const kept: string[] = [];
    for (const path of BUILD_CACHE_PATHS) {
      const source = await realDirectory(project, path);
      const target = join(dir, slot(path));
      if (!source) {
        // A cache the build no longer made is dropped, not kept stale.
        await this.drop(dir, target);
        continue;
      }
      await this.drop(dir, target);
      await rename(source, target);
      kept.push(path);
    }
    return { kept };
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
