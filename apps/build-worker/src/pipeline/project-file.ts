import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveInTree } from '@slipway/runtime';

/**
 * Opens the regular file at `path` in the project, following links only inside the project
 * (`resolveInTree`): uploads keep in-tree links, so a `package.json` or lockfile may be a link to
 * another file of the project, and reads as that file. Where the walk ends the file is opened
 * with `O_NOFOLLOW|O_NONBLOCK` (a FIFO left by an install script never blocks the worker), and on
 * Linux the path the kernel opened must be the one resolved (a directory swapped for a link in
 * between is not read through). null when it is not a regular file inside the project (missing,
 * leading out, a loop, a directory, a FIFO…); nothing outside the project is ever opened.
 */
export async function openProjectFile(project: string, path: string): Promise<{ handle: FileHandle; size: number } | null> {
  const root = await realpath(project);
  const resolved = await resolveInTree(root, [], path);
  if (resolved.kind !== 'inside' || !resolved.exists) return null;
  const abs = join(root, ...resolved.segments);
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  try {
    const info = await handle.stat();
    const where = process.platform === 'linux' ? await readlink(`/proc/self/fd/${handle.fd}`) : abs;
    if (!info.isFile() || where !== abs) {
      await handle.close();
      return null;
    }
    return { handle, size: info.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
