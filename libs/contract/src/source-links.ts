/**
 * The rule for symbolic links in an uploaded source (README, "Symbolic links in your project"):
 * a link is kept, as a link, when its target is relative and, followed hop by hop through the
 * other links of the same source the way the kernel would, never climbs above the project and
 * does not loop. The gateway applies it to an archive's entries, the CLI to the folder it is
 * about to send, so both refuse the same links with the same words. Pure: callers describe the
 * tree (which paths are links, and to what).
 */

/** Linux's own limit on links followed while resolving one path (ELOOP past it). */
export const MAX_LINKS_FOLLOWED = 40;

/**
 * Where a link of the source leads: `inside` with the link-free path it ends at (`''` is the
 * project itself; the path may not exist, like any dangling link), `outside` as soon as one hop
 * is absolute or climbs above the project (even one that would come back in), `loop` after
 * `MAX_LINKS_FOLLOWED` links.
 */
export type SourceLinkResolution = { kind: 'inside'; path: string } | { kind: 'outside' } | { kind: 'loop' };

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DRIVE = /^[A-Za-z]:/;

function isAbsoluteTarget(target: string): boolean {
  return target.startsWith('/') || DRIVE.test(target);
}

/**
 * Why `target` cannot be a link target in a source, or null. Checked as given (after NFC
 * normalisation by the caller), never repaired. `.` and `..` segments are allowed: where they
 * lead is `resolveSourceLink`'s question.
 */
export function linkTargetProblem(target: string, maxPathBytes: number): string | null {
  if (target.length === 0) return 'has an empty target';
  if (CONTROL.test(target)) return 'has a target with NUL or a control character';
  if (target.includes('\\')) return 'has a target with a backslash';
  if (isAbsoluteTarget(target)) return 'has an absolute target';
  if (new TextEncoder().encode(target).length > maxPathBytes) return `has a target longer than ${maxPathBytes} bytes`;
  return null;
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '' && segment !== '.');
}

/**
 * Follows the link at `linkPath` (a source path: relative, `/`-separated, no `.`/`..`) through
 * the source described by `targetOf` (the target of the link at a path, `undefined` for any
 * other path). A hop that goes above the project is refused rather than followed: the source is
 * unpacked somewhere else on the build machine, where "above" is not the project any more.
 */
export function resolveSourceLink(linkPath: string, targetOf: (path: string) => string | undefined): SourceLinkResolution {
  const first = targetOf(linkPath);
  if (first === undefined) throw new Error(`${linkPath} is not a link`);
  if (isAbsoluteTarget(first)) return { kind: 'outside' };
  const done = linkPath.split('/').slice(0, -1);
  const pending = segmentsOf(first);
  let followed = 1;
  while (pending.length > 0) {
    const segment = pending.shift()!;
    if (segment === '..') {
      if (done.length === 0) return { kind: 'outside' };
      done.pop();
      continue;
    }
    const target = targetOf([...done, segment].join('/'));
    if (target === undefined) {
      done.push(segment);
      continue;
    }
    followed += 1;
    if (followed > MAX_LINKS_FOLLOWED) return { kind: 'loop' };
    if (isAbsoluteTarget(target)) return { kind: 'outside' };
    pending.unshift(...segmentsOf(target));
  }
  return { kind: 'inside', path: done.join('/') };
}

/** A target as a message shows it: quoted, at most 200 characters. */
function shown(target: string): string {
  return JSON.stringify(target.length > 200 ? `${target.slice(0, 200)}…` : target);
}

/** How a refused link is described after its name: `"CLAUDE.md" <problem>`; null when the link is kept. */
export function sourceLinkProblem(linkPath: string, targetOf: (path: string) => string | undefined): string | null {
  const resolved = resolveSourceLink(linkPath, targetOf);
  if (resolved.kind === 'inside') return null;
  const target = shown(targetOf(linkPath)!);
  return resolved.kind === 'loop' ? `is a symbolic link (to ${target}) in a loop of links` : `is a symbolic link (to ${target}) that leads outside the project`;
}
