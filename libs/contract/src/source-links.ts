/**
 * The rule for symbolic links in an uploaded source (docs/guides/deploying.md, "Symbolic links in your project"):
 * a link is kept, as a link, when its target is relative and, followed hop by hop through the
 * other links of the same source the way the kernel would, never climbs above the project and
 * does not loop. The gateway applies it to an archive's entries, the CLI to the folder it is
 * about to send, so both refuse the same links with the same words. Pure: callers describe the
 * tree (which paths are links, and to what).
 */

/** Linux's own limit on links followed while resolving one path (ELOOP past it). */
export const MAX_LINKS_FOLLOWED = 40;

/**
 * Steps (path segments walked) one source may spend resolving all its links: this many per link,
 * and at least `MIN_LINK_STEPS`. A real project spends a handful per link; a crafted one (10 000
 * links, each a chain of 40 hops of 1 KiB targets) would spend hundreds of millions, blocking
 * the gateway's event loop for minutes: it is refused instead (`too_complex`).
 */
export const LINK_STEPS_PER_LINK = 128;
export const MIN_LINK_STEPS = 50_000;

/** The path limits a source's entries obey (`UploadLimits`): nothing deeper or longer can be a link. */
export interface SourceLinkLimits {
  maxPathDepth: number;
  maxPathBytes: number;
  maxPathSegmentBytes: number;
}

/**
 * Where a link of the source leads: `inside` with the link-free path it ends at (`''` is the
 * project itself; the path may not exist, like any dangling link; `null` when it is deeper than
 * any entry can be), `outside` as soon as one hop is absolute or climbs above the project (even
 * one that would come back in), `loop` after `MAX_LINKS_FOLLOWED` links, `too_complex` once the
 * source's links have spent their steps.
 */
export type SourceLinkResolution = { kind: 'inside'; path: string | null } | { kind: 'outside' } | { kind: 'loop' } | { kind: 'too_complex' };

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DRIVE = /^[A-Za-z]:/;

function isAbsoluteTarget(target: string): boolean {
  return target.startsWith('/') || DRIVE.test(target);
}

/**
 * Why `target` cannot be a link target in a source, or null. Checked as given (after NFC
 * normalisation by the caller), never repaired. `.` and `..` segments are allowed: where they
 * lead is `SourceLinks`' question.
 */
export function linkTargetProblem(target: string, limits: SourceLinkLimits): string | null {
  if (target.length === 0) return 'has an empty target';
  if (CONTROL.test(target)) return 'has a target with NUL or a control character';
  if (target.includes('\\')) return 'has a target with a backslash';
  if (isAbsoluteTarget(target)) return 'has an absolute target';
  const encoder = new TextEncoder();
  if (encoder.encode(target).length > limits.maxPathBytes) return `has a target longer than ${limits.maxPathBytes} bytes`;
  // No file system takes a longer name: the build machine's would fail on it (ENAMETOOLONG).
  if (target.split('/').some((segment) => encoder.encode(segment).length > limits.maxPathSegmentBytes))
    return `has a target with a segment longer than ${limits.maxPathSegmentBytes} bytes`;
  return null;
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '' && segment !== '.');
}

/**
 * The directory a walk stands in: its path as a stack of joined prefixes while it could still
 * name an entry, and only a count below that (nothing that deep or that long exists, so those
 * names never matter; `..` climbs back through the count first).
 */
class WalkPosition {
  private readonly prefixes: string[] = [];
  private unnamed = 0;

  constructor(
    private readonly limits: SourceLinkLimits,
    start: readonly string[],
  ) {
    for (const segment of start) this.down(segment);
  }

  get atRoot(): boolean {
    return this.prefixes.length === 0 && this.unnamed === 0;
  }

  /** The path one step down into `segment`, or null when no entry can be there. */
  child(segment: string): string | null {
    if (this.unnamed > 0 || this.prefixes.length >= this.limits.maxPathDepth) return null;
    const path = this.prefixes.length ? `${this.prefixes.at(-1)}/${segment}` : segment;
    // Characters never outnumber UTF-8 bytes: longer in characters is longer in bytes.
    return path.length > this.limits.maxPathBytes ? null : path;
  }

  down(segment: string): void {
    const path = this.child(segment);
    if (path === null) this.unnamed += 1;
    else this.prefixes.push(path);
  }

  up(): void {
    if (this.unnamed > 0) this.unnamed -= 1;
    else this.prefixes.pop();
  }

  get path(): string | null {
    return this.unnamed > 0 ? null : (this.prefixes.at(-1) ?? '');
  }
}

/** The links of one source (path → target, paths relative and `/`-separated), resolved under one budget. */
export class SourceLinks {
  private readonly budget: number;
  private spent = 0;

  constructor(
    private readonly targets: ReadonlyMap<string, string>,
    private readonly limits: SourceLinkLimits,
  ) {
    this.budget = Math.max(MIN_LINK_STEPS, LINK_STEPS_PER_LINK * targets.size);
  }

  /**
   * Follows the link at `linkPath` through the source. A hop that goes above the project is
   * refused rather than followed: the source is unpacked somewhere else on the build machine,
   * where "above" is not the project any more.
   */
  resolve(linkPath: string): SourceLinkResolution {
    const first = this.targets.get(linkPath);
    if (first === undefined) throw new Error(`${linkPath} is not a link`);
    if (isAbsoluteTarget(first)) return { kind: 'outside' };
    const position = new WalkPosition(this.limits, linkPath.split('/').slice(0, -1));
    const pending = segmentsOf(first).reverse();
    let followed = 1;
    while (pending.length > 0) {
      this.spent += 1;
      if (this.spent > this.budget) return { kind: 'too_complex' };
      const segment = pending.pop()!;
      if (segment === '..') {
        if (position.atRoot) return { kind: 'outside' };
        position.up();
        continue;
      }
      const here = position.child(segment);
      const target = here === null ? undefined : this.targets.get(here);
      if (target === undefined) {
        position.down(segment);
        continue;
      }
      followed += 1;
      if (followed > MAX_LINKS_FOLLOWED) return { kind: 'loop' };
      if (isAbsoluteTarget(target)) return { kind: 'outside' };
      const hop = segmentsOf(target);
      for (let i = hop.length - 1; i >= 0; i -= 1) pending.push(hop[i]!);
    }
    return { kind: 'inside', path: position.path };
  }

  /** How a refused link is described after its name (`"CLAUDE.md" <problem>`); null when the link is kept. */
  problem(linkPath: string): string | null {
    const resolved = this.resolve(linkPath);
    if (resolved.kind === 'inside') return null;
    const target = shown(this.targets.get(linkPath)!);
    switch (resolved.kind) {
      case 'outside':
        return `is a symbolic link (to ${target}) that leads outside the project`;
      case 'loop':
        return `is a symbolic link (to ${target}) in a loop of links`;
      case 'too_complex':
        return `is a symbolic link (to ${target}) that cannot be checked: the project's links take more than ${this.budget} steps to follow`;
    }
  }
}

/** A target as a message shows it: quoted, at most 200 characters. */
function shown(target: string): string {
  return JSON.stringify(target.length > 200 ? `${target.slice(0, 200)}…` : target);
}
