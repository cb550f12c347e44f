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

/**
 * The paths of one source, compared the way the most forgiving file system a build may run on
 * would (Unicode NFC + lower case): two paths that could land on the same file, or a file that
 * is also the parent of another, collide.
 */
export class SourcePathSet {
  private readonly files = new Map<string, string>();
  private readonly directories = new Set<string>();

  /** Adds `path` (already validated), or returns why it collides. */
  add(path: string): string | null {
    const folded = fold(path);
    const previous = this.files.get(folded);
    if (previous !== undefined) return previous === path ? `duplicates "${previous}"` : `collides with "${previous}" after Unicode normalisation and case folding`;
    if (this.directories.has(folded)) return 'is both a file and a directory';
    const segments = folded.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (this.files.has(parent)) return `is inside "${this.files.get(parent)}", which is a file`;
    }
    for (let i = 1; i < segments.length; i++) this.directories.add(segments.slice(0, i).join('/'));
    this.files.set(folded, path);
    return null;
  }

  get size(): number {
    return this.files.size;
  }
}

function fold(path: string): string {
  return path.normalize('NFC').toLowerCase();
}
