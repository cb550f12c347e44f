import { isForbiddenSegment } from '@slipway/data-plane';

/** A request path decoded once, empty segments (repeated slashes) dropped; `key` is its canonical form. */
export type RequestPath = { kind: 'path'; segments: string[]; directory: boolean; key: string } | { kind: 'refused' };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Already canonical (nothing to decode, single slashes, no segment starting with a dot): the common case, parsed without decoding. */
const PLAIN = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9_~.-]*)*\/?$/;

const refusedSegment = (s: string) => s === '..' || s === '.' || isForbiddenSegment(s);

/**
 * Decodes a request path once. Refused (answered 404 before the file system is touched): bad
 * percent-encoding, no leading slash, NUL or any control character (tab, CR, LF — which browsers
 * strip from URLs), backslash (which browsers read as a slash), `.`/`..` and forbidden segments.
 * Repeated slashes are collapsed: `//a.js`, `/%2fa.js`, `/%61.js` and `/a.js` are one path.
 */
export function parseRequestPath(rawPath: string): RequestPath {
  if (PLAIN.test(rawPath)) {
    const segments = rawPath.split('/').filter((s) => s !== '');
    return segments.some(refusedSegment) ? { kind: 'refused' } : { kind: 'path', segments, directory: rawPath.endsWith('/'), key: rawPath };
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return { kind: 'refused' };
  }
  if (!decoded.startsWith('/') || CONTROL.test(decoded) || decoded.includes('\\')) return { kind: 'refused' };
  const segments = decoded.split('/').filter((s) => s !== '');
  if (segments.some(refusedSegment)) return { kind: 'refused' };
  const directory = decoded.endsWith('/');
  return { kind: 'path', segments, directory, key: canonicalPath({ segments, directory }) };
}

/** The cache key of a parsed path: one per file or directory however the request spelled it. */
export function canonicalPath(path: { segments: string[]; directory: boolean }): string {
  return `/${path.segments.join('/')}${path.directory && path.segments.length ? '/' : ''}`;
}

/**
 * The `Location` of the redirect from a directory to its trailing-slash form: built from the
 * decoded segments, each percent-encoded, never from the request's own spelling. It always
 * starts with exactly one `/` followed by an encoded segment, so no browser can read it as
 * `//host` or `/\host` (another origin) however the request was spelled.
 */
export function directoryLocation(segments: string[]): string {
  return sameOriginPath(`/${segments.map(encodeURIComponent).join('/')}/`);
}

/**
 * Last wall before a `Location` leaves the edge: a path-absolute reference whose leading run of
 * slashes, backslashes and the characters browsers strip (tab, CR, LF, spaces, C0 controls) is
 * collapsed to one `/`, so it stays on the request's origin.
 */
export function sameOriginPath(location: string): string {
  // eslint-disable-next-line no-control-regex
  return `/${location.replace(/^[\s\u0000-\u001f/\\]+/, '')}`;
}
