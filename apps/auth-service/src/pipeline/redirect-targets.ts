import { AuthError } from '../common/index.js';
import type { Tenant } from '../tenants/index.js';
import { isTrustedOrigin } from './origin-check.js';

/** Every field the service accepts as somewhere to send the visitor (body or query), with Better Auth's code and message. */
const REDIRECT_FIELDS = {
  callbackURL: ['INVALID_CALLBACK_URL', 'Invalid callbackURL'],
  redirectTo: ['INVALID_REDIRECT_URL', 'Invalid redirectURL'],
  errorCallbackURL: ['INVALID_ERROR_CALLBACK_URL', 'Invalid errorCallbackURL'],
  newUserCallbackURL: ['INVALID_NEW_USER_CALLBACK_URL', 'Invalid newUserCallbackURL'],
} as const;
export type RedirectField = keyof typeof REDIRECT_FIELDS;
export const REDIRECT_FIELD_NAMES = Object.keys(REDIRECT_FIELDS) as RedirectField[];

/**
 * C0 and C1 controls (Better Auth's set). Browsers delete tab, CR and LF anywhere in a URL before
 * parsing it, so `/\t/evil.example` — a path to us — is `//evil.example`, another host, to them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** Browsers read `\` as `/` in http(s) URLs: `/\evil.example` is `//evil.example`. */
const BACKSLASH = '\\';
/** `%2f`/`%5c` in a relative path: routers that decode before matching turn `/%2f/evil.example` into `//evil.example`. */
const ENCODED_SEPARATOR = /%2f|%5c/i;
/**
 * Root-relative targets are resolved against the application's page, which the service does not
 * know by name: any origin of our own choosing does, as long as the result must stay on it.
 */
const RELATIVE_BASE = 'https://application.invalid';

/**
 * The redirect targets in `values` (a request body or query), each checked and normalised:
 * - a root-relative path (`/…`, not `//…`) stays relative, normalised by the WHATWG URL parser
 *   (`/a/../b?x#y` → `/b?x#y`, non-ASCII percent-encoded);
 * - an absolute http(s) URL must be on one of the tenant's trusted origins (origin-check.ts) and is
 *   returned as the parser serialises it (`HTTP://LOCALHOST:5173` → `http://localhost:5173/`).
 * A target spelled so that a browser or router may read it differently from this parser (control
 * characters, backslashes, encoded slashes in a relative path) or that is not a string: 400. A well-formed
 * target elsewhere (another origin, a protocol-relative `//host`, another scheme): 403, Better
 * Auth's answer. Both carry Better Auth's code for the field. Empty values are left out.
 */
export function checkedRedirectTargets(tenant: Tenant, values: Record<string, unknown>): Partial<Record<RedirectField, string>> {
  const targets: Partial<Record<RedirectField, string>> = {};
  for (const field of REDIRECT_FIELD_NAMES) {
    const value = values[field];
    if (value === undefined || value === null || value === '') continue;
    targets[field] = checkedTarget(tenant, field, value);
  }
  return targets;
}

function checkedTarget(tenant: Tenant, field: RedirectField, value: unknown): string {
  const [code, message] = REDIRECT_FIELDS[field];
  if (typeof value !== 'string') throw new AuthError(400, code, `${message}: expected a string`);
  if (CONTROL_CHARACTER.test(value) || value.includes(BACKSLASH) || (isRootRelative(value) && ENCODED_SEPARATOR.test(pathOf(value)))) {
    throw new AuthError(400, code, `${message}: control characters, backslashes and encoded slashes are not allowed`);
  }
  const target = normalised(tenant, value);
  if (target === null) throw new AuthError(403, code, message);
  // Dot segments can leave an empty first segment (`/%2e//evil.example` → `//evil.example`): as a
  // relative target that is another host, so the normalised form must be root-relative too.
  if (target.startsWith('//')) throw new AuthError(400, code, `${message}: the path may not begin with an empty segment`);
  return target;
}

/** The normalised target, or null when it leads off the tenant's origins. */
function normalised(tenant: Tenant, value: string): string | null {
  if (isRootRelative(value)) {
    const url = new URL(value, RELATIVE_BASE);
    return url.origin === RELATIVE_BASE ? `${url.pathname}${url.search}${url.hash}` : null;
  }
  return isTrustedOrigin(tenant, value) ? new URL(value).href : null;
}

function isRootRelative(value: string): boolean {
  return value.startsWith('/') && !value.startsWith('//');
}

/** The part of a URL before its query or fragment (where an encoded slash could be read as a separator). */
function pathOf(value: string): string {
  const end = value.search(/[?#]/);
  return end === -1 ? value : value.slice(0, end);
}
