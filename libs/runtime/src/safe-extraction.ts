import { constants } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What an extraction of an untrusted tar (a stored source on the build worker, a release artifact
 * on the edge) shares: entry names split and checked, parents made only as real directories, files
 * created without following a link. Each caller says how a refusal reads (its own error).
 */

// eslint-disable-next-line no-control-regex -- names with control characters are refused on purpose
const SEGMENT = /^[^\u0000-\u001f\u007f/\\]+$/;
/** Create, never open what exists, never follow a link in the last component. */
export const CREATE_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** An entry's name as path segments (a trailing `/` dropped); `refuse` for an absolute, empty, `.`/`..` or control-character name. */
export function entrySegments(name: string, refuse: () => Error): string[] {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  const segments = trimmed.split('/');
  if (!trimmed || trimmed.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..' || !SEGMENT.test(s))) throw refuse();
  return segments;
}

/**
 * Makes sure every parent of an entry is a real directory this extraction made: a parent that is
 * a link (or a file) is refused, so no write ever goes through a link (`dir -> ../..`, then
 * `dir/x`). `known` holds the directories already made or checked: an extraction never removes or
 * replaces a path (every creation is exclusive), so a directory once checked stays one and is not
 * looked at again (a release's 1 300 files sit ~8 levels deep: 10 000 lstat calls otherwise).
 */
export async function ensureParents(
  root: string,
  segments: string[],
  known: Set<string>,
  options: { mode: number; refuse: (parent: string, isLink: boolean) => Error },
): Promise<void> {
  for (let i = 1; i < segments.length; i += 1) {
    const relative = segments.slice(0, i).join('/');
    if (known.has(relative)) continue;
    const dir = join(root, relative);
    const info = await lstat(dir).catch(() => null);
    if (info && !info.isDirectory()) throw options.refuse(relative, info.isSymbolicLink());
    if (!info) await mkdir(dir, { mode: options.mode });
    known.add(relative);
  }
}
