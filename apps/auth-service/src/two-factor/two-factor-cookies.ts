import { createHmac, timingSafeEqual } from 'node:crypto';
import { signedValue, soleCookie } from '../cookies/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `two_factor` and `trust_device` cookies under the service's prefix, scoped like the
 * session cookie (`__Secure-`, `Path=/a/{slug}`; `@slipway/auth-server` re-issues every
 * `__Secure-slipway.*` cookie as `__Host-slipway.*` on the application's host).
 */
export const CHALLENGE_COOKIE = '__Secure-slipway.two_factor';
export const TRUST_COOKIE = '__Secure-slipway.trust_device';
/** Better Auth's `twoFactorCookieMaxAge` (10 minutes) and `trustDeviceMaxAge` (30 days). */
export const CHALLENGE_MAX_AGE_SECONDS = 600;
export const TRUST_MAX_AGE_SECONDS = 30 * 24 * 3600;

function attributes(tenant: Tenant, maxAge: number): string {
  return `Max-Age=${maxAge}; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

/** A signed cookie (Better Auth's format: `value.base64(HMAC-SHA256(cookie secret, value))`, URL-encoded). */
export function signedCookie(tenant: Tenant, name: string, value: string, maxAge: number): string {
  return `${name}=${signedValue(tenant, value)}; ${attributes(tenant, maxAge)}`;
}

export function clearedCookie(tenant: Tenant, name: string): string {
  return `${name}=; ${attributes(tenant, 0)}`;
}

/**
 * The value of `name` if it was sent exactly once (two mean a tossed cookie: neither is used) and
 * carries this tenant's signature; else null. Another tenant's cookie fails here (its secret differs).
 */
export function readSignedCookie(tenant: Tenant, header: string | undefined, name: string): string | null {
  const raw = soleCookie(header, name);
  if (raw === null) return null;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return null;
  }
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return null;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64');
  const expected = createHmac('sha256', tenant.cookieSecret).update(payload).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? payload : null;
}

/** Binds a trusted device to its user (Better Auth: HMAC of `userId!trustId`, base64url). */
export function trustMac(tenant: Tenant, userId: string, trustId: string): string {
  return createHmac('sha256', tenant.cookieSecret).update(`${userId}!${trustId}`).digest('base64url');
}

export function macsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
