import { createHmac, timingSafeEqual } from 'node:crypto';
import { soleCookie } from '../cookies/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `better-auth-passkey` cookie under the service's own prefix (which
 * @slipway/auth-server re-issues first-party as `__Host-slipway.passkey_challenge`): the key of
 * the pending ceremony in `service_auth.verifications`, signed with the tenant's cookie secret.
 */
export const CHALLENGE_COOKIE = '__Secure-slipway.passkey_challenge';
/** Better Auth's `maxAgeInSeconds` for a ceremony. */
export const CHALLENGE_TTL_SECONDS = 300;

function sign(tenant: Tenant, token: string): string {
  return createHmac('sha256', tenant.cookieSecret).update(`passkey-challenge:${token}`).digest('base64url');
}

export function challengeCookie(tenant: Tenant, token: string): string {
  return `${CHALLENGE_COOKIE}=${encodeURIComponent(`${token}.${sign(tenant, token)}`)}; Max-Age=${CHALLENGE_TTL_SECONDS}; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

export function clearedChallengeCookie(tenant: Tenant): string {
  return `${CHALLENGE_COOKIE}=; Max-Age=0; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
}

/** The ceremony key from the request's one challenge cookie signed by this tenant; null otherwise (absent, doubled, forged, another tenant's). */
export function challengeTokenFrom(tenant: Tenant, cookieHeader: string | undefined): string | null {
  const raw = soleCookie(cookieHeader, CHALLENGE_COOKIE);
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
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(sign(tenant, token));
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
}
