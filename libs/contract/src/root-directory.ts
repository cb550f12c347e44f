/** The longest `rootDirectory` a deploy may name, in characters (all of them ASCII). */
export const ROOT_DIRECTORY_MAX_LENGTH = 200;

/** What one segment of a `rootDirectory` may hold: the names monorepos give their packages. */
const SEGMENT = /^[A-Za-z0-9._@+-]+$/;

/**
 * The same rule as one regular expression, for the published contract (`GET /api/v1`'s
 * DeployRequest) and clients that check before they upload; `checkRootDirectory` says why.
 */
export const ROOT_DIRECTORY_PATTERN = new RegExp(
  `^(?=[^/].{0,${ROOT_DIRECTORY_MAX_LENGTH - 1}}/?$)(?!\\.\\.?(?:/|$))[A-Za-z0-9._@+-]+(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9._@+-]+)*/?$`,
);

export type RootDirectoryCheck = { ok: true; value: string } | { ok: false; problem: string };

/**
 * A deploy's `rootDirectory` (as Vercel's "Root Directory"): the directory of the uploaded
 * project that holds the application to build, e.g. `apps/web`. Relative, `/`-separated,
 * segments of letters, digits and `._@+-`, no `.` or `..` segment. One trailing `/` is trimmed
 * (`apps/web/` is how a shell completes it); anything else that would need repair is refused,
 * never rewritten. `problem` completes "rootDirectory …" and never quotes the value, which may
 * hold anything a client sent.
 */
export function checkRootDirectory(raw: string): RootDirectoryCheck {
  if (raw.length === 0) return { ok: false, problem: 'is empty' };
  if (raw.startsWith('/')) return { ok: false, problem: 'is absolute: name a directory inside the project, like apps/web' };
  const value = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  if (value.length > ROOT_DIRECTORY_MAX_LENGTH) return { ok: false, problem: `is longer than ${ROOT_DIRECTORY_MAX_LENGTH} characters` };
  for (const segment of value.split('/')) {
    if (segment === '') return { ok: false, problem: 'has an empty segment' };
    if (segment === '.' || segment === '..') return { ok: false, problem: `has a "${segment}" segment` };
    if (!SEGMENT.test(segment)) return { ok: false, problem: 'may hold only letters, digits and . _ @ + - between its / separators' };
  }
  return { ok: true, value };
}
