import { createHmac, timingSafeEqual } from 'node:crypto';
import { soleCookie } from '../cookies/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `admin_session` cookie: while an admin impersonates someone, their own session
 * token waits here, signed like the session cookie (`value.base64(HMAC-SHA256(secret, value))`,
 * value `token:` as Better Auth writes `token:{dontRememberMe}`). `__Secure-slipway.` as every
 * cookie of the service; @slipway/auth-server makes it `__Host-slipway.admin_session` on the app's host.
 */
export const ADMIN_SESSION_COOKIE = '__Secure-slipway.admin_session';

const sign = (tenant: Tenant, value: string) => createHmac('sha256', tenant.cookieSecret).update(value).digest('base64');

export function adminSessionCookie(tenant: Tenant, adminToken: string, maxAgeSeconds: number): string {
  const value = `${adminToken}:`;
  return `${ADMIN_SESSION_COOKIE}=${encodeURIComponent(`${value}.${sign(tenant, value)}`)}; Max-Age=${maxAgeSeconds}; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

export function clearedAdminSessionCookie(tenant: Tenant): string {
  return `${ADMIN_SESSION_COOKIE}=; Max-Age=0; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

/** The admin's kept session token when exactly one such cookie came and its signature is this tenant's. */
export function adminTokenFromCookieHeader(tenant: Tenant, header: string | undefined): string | null {
  const raw = soleCookie(header, ADMIN_SESSION_COOKIE);
  if (raw === null) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  const dot = decoded.lastIndexOf('.');
  if (dot <= 0) return null;
  const value = decoded.slice(0, dot);
  const given = Buffer.from(decoded.slice(dot + 1), 'base64');
  const expected = Buffer.from(sign(tenant, value), 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const token = value.split(':')[0];
  return token || null;
}
