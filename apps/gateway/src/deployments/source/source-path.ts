import type { UploadLimits } from '@slipway/contract';

type PathLimits = Pick<UploadLimits, 'maxPathBytes' | 'maxPathSegmentBytes' | 'maxPathDepth'>;

// C0 and C1 control characters and DEL: invisible in listings, dangerous in shells and logs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DRIVE = /^[A-Za-z]:/;

/**
 * Why `raw` is not a safe relative source path, or null when it is. The path is checked as
 * given (after NFC normalisation), never "repaired": a path that needs repair is refused.
 */
export function unsafePathReason(raw: string, limits: PathLimits): string | null {
  if (raw.length === 0) return 'is empty';
  if (CONTROL.test(raw)) return 'contains NUL or a control character';
  if (raw.includes('\\')) return 'contains a backslash';
  if (raw.startsWith('/') || DRIVE.test(raw)) return 'is absolute';
  if (Buffer.byteLength(raw) > limits.maxPathBytes) return `is longer than ${limits.maxPathBytes} bytes`;
  const segments = raw.split('/');
  if (segments.length > limits.maxPathDepth) return `is deeper than ${limits.maxPathDepth} segments`;
  for (const segment of segments) {
    if (segment === '') return 'has an empty segment';
    if (segment === '..') return 'has a ".." segment';
    if (segment === '.') return 'has a "." segment';
    if (Buffer.byteLength(segment) > limits.maxPathSegmentBytes) return `has a segment longer than ${limits.maxPathSegmentBytes} bytes`;
  }
  return null;
}

/** What a source path is: a regular file, or a symbolic link (which no other path may be below). */
export type SourceEntryKind = 'file' | 'link';

const KIND_NAMES: Record<SourceEntryKind, string> = { file: 'a file', link: 'a symbolic link' };

/**
 * The paths of one source, compared the way the most forgiving file system a build may run on
 * would (Unicode NFC + lower case): two paths that could land on the same file, or a file or
 * link that is also the parent of another path, collide. A path below a link is what the classic
 * "link, then write through it" archive attack needs (`dir -> /etc`, then `dir/passwd`), so it is
 * refused whichever comes first.
 */
export class SourcePathSet {
  private readonly entries = new Map<string, { path: string; kind: SourceEntryKind }>();
  private readonly directories = new Set<string>();

  /** Adds `path` (already validated), or returns why it collides. */
  add(path: string, kind: SourceEntryKind = 'file'): string | null {
    const folded = fold(path);
    const previous = this.entries.get(folded);
    if (previous !== undefined)
      return previous.path === path ? `duplicates "${previous.path}"` : `collides with "${previous.path}" after Unicode normalisation and case folding`;
    if (this.directories.has(folded)) return `is both ${KIND_NAMES[kind]} and a directory`;
    const below = this.parentEntry(folded);
    if (below) return below;
    this.addParents(folded);
    this.entries.set(folded, { path, kind });
    return null;
  }

  /** Records a directory entry (already validated), or returns why it collides. */
  addDirectory(path: string): string | null {
    const folded = fold(path);
    const previous = this.entries.get(folded);
    if (previous !== undefined) return `is both a directory and ${KIND_NAMES[previous.kind]} ("${previous.path}")`;
    const below = this.parentEntry(folded);
    if (below) return below;
    this.addParents(folded);
    this.directories.add(folded);
    return null;
  }

  get size(): number {
    return this.entries.size;
  }

  private parentEntry(folded: string): string | null {
    const segments = folded.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = this.entries.get(segments.slice(0, i).join('/'));
      if (parent) return `is inside "${parent.path}", which is ${KIND_NAMES[parent.kind]}`;
    }
    return null;
  }

  private addParents(folded: string): void {
    const segments = folded.split('/');
    for (let i = 1; i < segments.length; i++) this.directories.add(segments.slice(0, i).join('/'));
  }
}

function fold(path: string): string {
  return path.normalize('NFC').toLowerCase();
}
