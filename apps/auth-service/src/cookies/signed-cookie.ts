import { createHmac, timingSafeEqual } from 'node:crypto';
import { soleCookie } from './cookie-header.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Every cookie the service sets: `__Secure-` (not `__Host-`: tenants share the service's host, so
 * the cookie is scoped to the tenant's path `/a/{slug}` instead of `Path=/`), no Domain, HttpOnly,
 * SameSite=Lax. `maxAgeSeconds` null: a browser-session cookie.
 */
export function cookieAttributes(tenant: Tenant, maxAgeSeconds: number | null): string {
  return `${maxAgeSeconds === null ? '' : `Max-Age=${maxAgeSeconds}; `}Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

/**
 * Better Auth's signed cookie value, `value.base64(HMAC-SHA256(cookie secret, message))`,
 * URL-encoded. The message is the value itself for the session cookie (Better Auth's format, which
 * @slipway/sign-in-sdk checks with the same secret) and `{cookie name}\n{value}` for every other
 * cookie, so no cookie's signature is valid under another name (a session token replayed as a
 * challenge, say).
 */
function signature(tenant: Tenant, name: string, value: string, sessionCookieName: string): Buffer {
  return createHmac('sha256', tenant.cookieSecret)
    .update(name === sessionCookieName ? value : `${name}\n${value}`)
    .digest();
}

/** A factory bound to the session cookie's name (the one cookie signed in Better Auth's own format). */
export function signedCookies(sessionCookieName: string) {
  const signedValue = (tenant: Tenant, name: string, value: string) =>
    encodeURIComponent(`${value}.${signature(tenant, name, value, sessionCookieName).toString('base64')}`);
  return {
    signedValue,
    /** `Set-Cookie` for `name` holding `value`, signed with the tenant's cookie secret. */
    signedCookie(tenant: Tenant, name: string, value: string, maxAgeSeconds: number | null): string {
      return `${name}=${signedValue(tenant, name, value)}; ${cookieAttributes(tenant, maxAgeSeconds)}`;
    },
    clearedCookie(tenant: Tenant, name: string): string {
      return `${name}=; ${cookieAttributes(tenant, 0)}`;
    },
    /**
     * The value of `name` if the request sent it exactly once (two mean a tossed cookie: neither
     * is used) and it carries this tenant's signature for this name; else null. Another tenant's
     * cookie fails here (its secret differs).
     */
    readSignedCookie(tenant: Tenant, header: string | undefined, name: string): string | null {
      const raw = soleCookie(header, name);
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
      const expected = signature(tenant, name, value, sessionCookieName);
      return given.length === expected.length && timingSafeEqual(given, expected) ? value : null;
    },
  };
}
