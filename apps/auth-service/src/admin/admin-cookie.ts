import { clearedCookie, readSignedCookie, signedCookie } from '../cookies/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `admin_session` cookie: while an admin impersonates someone, their own session
 * token waits here, signed as every cookie of the service (cookies/signed-cookie.ts),
 * value `token:` as Better Auth writes `token:{dontRememberMe}`). `__Secure-slipway.` as every
 * cookie of the service; @slipway/sign-in-sdk makes it `__Host-slipway.admin_session` on the app's host.
 */
export const ADMIN_SESSION_COOKIE = '__Secure-slipway.admin_session';

export function adminSessionCookie(tenant: Tenant, adminToken: string, maxAgeSeconds: number): string {
  return signedCookie(tenant, ADMIN_SESSION_COOKIE, `${adminToken}:`, maxAgeSeconds);
}

export function clearedAdminSessionCookie(tenant: Tenant): string {
  return clearedCookie(tenant, ADMIN_SESSION_COOKIE);
}

/** The admin's kept session token when exactly one such cookie came and its signature is this tenant's. */
export function adminTokenFromCookieHeader(tenant: Tenant, header: string | undefined): string | null {
  const value = readSignedCookie(tenant, header, ADMIN_SESSION_COOKIE);
  return value?.split(':')[0] || null;
}
