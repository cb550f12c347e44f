import { cookieValues } from './cookie-header.js';
import { signedCookies } from './signed-cookie.js';
import type { Tenant } from '../tenants/index.js';

/**
 * `__Secure-` (not `__Host-`): the service shares its host between tenants, so the cookie is
 * scoped to the tenant's path `/a/{slug}` instead of `Path=/`. No Domain attribute.
 */
export const SESSION_COOKIE = '__Secure-slipway.session_token';
export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

const cookies = signedCookies(SESSION_COOKIE);
export const { signedCookie, clearedCookie, readSignedCookie } = cookies;

/** Better Auth's signed cookie value of a session token: `token.base64(HMAC-SHA256(secret, token))`, URL-encoded. */
export function signedValue(tenant: Tenant, token: string): string {
  return cookies.signedValue(tenant, SESSION_COOKIE, token);
}

export function sessionCookie(tenant: Tenant, token: string, maxAgeSeconds: number | null): string {
  return signedCookie(tenant, SESSION_COOKIE, token, maxAgeSeconds);
}

export function clearedSessionCookie(tenant: Tenant): string {
  return clearedCookie(tenant, SESSION_COOKIE);
}

/** More than one session cookie: ambiguous (cookie tossing); the request has no session and the cookie is cleared. */
export function hasAmbiguousSessionCookie(header: string | undefined): boolean {
  return cookieValues(header, SESSION_COOKIE).length > 1;
}

/**
 * The raw session token from a Cookie header, if exactly one session cookie is there and its
 * signature is this tenant's. With two or more (whichever comes first) there is no session.
 */
export function tokenFromCookieHeader(tenant: Tenant, header: string | undefined): string | null {
  return readSignedCookie(tenant, header, SESSION_COOKIE);
}
