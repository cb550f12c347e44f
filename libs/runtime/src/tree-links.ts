import { lstat, readlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

/** Linux's own limit on links followed while resolving one path (ELOOP past it). */
const MAX_LINKS_FOLLOWED = 40;

/**
 * Where a path inside a tree leads once every link on the way is followed, resolved without ever
 * leaving the tree: `inside` with the link-free segments it ends at (the last ones may not exist),
 * `outside` as soon as one step would go above the root (an absolute link target, or a `..` past
 * it, even one that would come back in), `loop` after 40 links.
 */
export type TreeResolution = { kind: 'inside'; segments: string[]; exists: boolean } | { kind: 'outside' } | { kind: 'loop' };

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.');
}

/**
 * Resolves `path` (relative, or segments) from the directory `from` (segments under `root`,
 * already free of links) inside `root`, which must be a real path (no link in it). It reads only
 * the tree itself: `lstat` and `readlink` of entries under `root`, never what a link points to
 * outside, so the answer says nothing about the file system beyond the tree.
 *
 * The same walk the kernel does, with one rule added: a step above the root is refused rather
 * than followed. A release is a copy of the packed tree placed somewhere else, so a chain that
 * leaves the tree and comes back in would lead elsewhere once extracted; it is `outside` too.
 */
export async function resolveInTree(root: string, from: readonly string[], path: string | readonly string[]): Promise<TreeResolution> {
  if (typeof path === 'string' && isAbsolute(path)) return { kind: 'outside' };
  const done = [...from];
  const pending = typeof path === 'string' ? split(path) : path.filter((s) => s !== '' && s !== '.');
  let followed = 0;
  let exists = true;
  while (pending.length > 0) {
    const segment = pending.shift()!;
    if (segment === '..') {
      if (done.length === 0) return { kind: 'outside' };
      done.pop();
      continue;
    }
    if (!exists) {
      // Below a missing entry nothing is a link: the rest can only be names to create.
      done.push(segment);
      continue;
    }
    const info = await lstat(join(root, ...done, segment)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw error;
    });
    if (!info) {
      exists = false;
      done.push(segment);
      continue;
    }
    if (info.isSymbolicLink()) {
      followed += 1;
      if (followed > MAX_LINKS_FOLLOWED) return { kind: 'loop' };
      const target = await readlink(join(root, ...done, segment));
      if (isAbsolute(target)) return { kind: 'outside' };
      pending.unshift(...split(target));
      continue;
    }
    done.push(segment);
  }
  return { kind: 'inside', segments: done, exists };
}

/** A link at `linkSegments` (under `root`) whose target stays inside the tree; see `resolveInTree`. */
export async function resolveLinkInTree(root: string, linkSegments: readonly string[]): Promise<TreeResolution> {
  const target = await readlink(join(root, ...linkSegments));
  return resolveInTree(root, linkSegments.slice(0, -1), target);
}
