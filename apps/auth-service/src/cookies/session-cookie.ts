import { createHmac, timingSafeEqual } from 'node:crypto';
import { cookieValues, soleCookie } from './cookie-header.js';
import type { Tenant } from '../tenants/index.js';

/**
 * `__Secure-` (not `__Host-`): the service shares its host between tenants, so the cookie is
 * scoped to the tenant's path `/a/{slug}` instead of `Path=/`. No Domain attribute.
 */
export const SESSION_COOKIE = '__Secure-slipway.session_token';
export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

function sign(secret: Buffer, token: string): string {
  return createHmac('sha256', secret).update(token).digest('base64');
}

/** Better Auth's signed cookie value: `token.base64(HMAC-SHA256(secret, token))`, URL-encoded. */
export function signedValue(tenant: Tenant, token: string): string {
  return encodeURIComponent(`${token}.${sign(tenant.cookieSecret, token)}`);
}

export function sessionCookie(tenant: Tenant, token: string, maxAgeSeconds: number | null): string {
  const maxAge = maxAgeSeconds === null ? '' : `; Max-Age=${maxAgeSeconds}`;
  return `${SESSION_COOKIE}=${signedValue(tenant, token)}${maxAge}; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

export function clearedSessionCookie(tenant: Tenant): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
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
  const raw = soleCookie(header, SESSION_COOKIE);
  if (raw === null) return null;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return null;
  }
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return null;
  const token = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64');
  const expected = Buffer.from(sign(tenant.cookieSecret, token), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
}
