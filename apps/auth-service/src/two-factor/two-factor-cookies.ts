import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `two_factor` and `trust_device` cookies under the service's prefix, scoped like the
 * session cookie (`__Secure-`, `Path=/a/{slug}`; `@slipway/sign-in-sdk` re-issues every
 * `__Secure-slipway.*` cookie as `__Host-slipway.*` on the application's host).
 */
export const CHALLENGE_COOKIE = '__Secure-slipway.two_factor';
export const TRUST_COOKIE = '__Secure-slipway.trust_device';
/** Better Auth's `twoFactorCookieMaxAge` (10 minutes) and `trustDeviceMaxAge` (30 days). */
export const CHALLENGE_MAX_AGE_SECONDS = 600;
export const TRUST_MAX_AGE_SECONDS = 30 * 24 * 3600;

// Signed as every cookie of the service (cookies/signed-cookie.ts: the signature binds the cookie's name).
export { clearedCookie, readSignedCookie, signedCookie } from '../cookies/index.js';

/** Binds a trusted device to its user (Better Auth: HMAC of `userId!trustId`, base64url). */
export function trustMac(tenant: Tenant, userId: string, trustId: string): string {
  return createHmac('sha256', tenant.cookieSecret).update(`${userId}!${trustId}`).digest('base64url');
}

export function macsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * What is stored of a backup code: HMAC-SHA256 under the application's cookie secret, bound to the
 * user (about 51 bits each; keyed, a copy of the database gives none of them away without the secret).
 */
export function backupCodeDigest(tenant: Tenant, userId: string, code: string): string {
  return createHmac('sha256', tenant.cookieSecret).update(`backup-code\n${userId}\n${code}`).digest('hex');
}
