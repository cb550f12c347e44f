/**
 * The one spelling of a path under `/a/{slug}` that may reach a handler: segments of unreserved
 * characters only (no percent-encoding, no `;` parameters, no backslash), no empty segment (no
 * doubled or trailing slash), no `.` or `..` segment. Case is left to the router, which is
 * case-sensitive (see StrictRouting): `/SIGN-IN/EMAIL` is not `/sign-in/email`.
 */
const CANONICAL = /^\/a\/[a-z0-9-]{1,63}(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)*$/;

/** The path of a raw request target (before `?`), or null when it is not canonical. */
export function canonicalPath(requestTarget: string): string | null {
  const q = requestTarget.indexOf('?');
  const path = q < 0 ? requestTarget : requestTarget.slice(0, q);
  return CANONICAL.test(path) ? path : null;
}
