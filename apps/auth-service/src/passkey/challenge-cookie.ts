import { clearedCookie, readSignedCookie, signedCookie } from '../cookies/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * Better Auth's `better-auth-passkey` cookie under the service's own prefix (which
 * @slipway/sign-in-sdk re-issues first-party as `__Host-slipway.passkey_challenge`): the key of
 * the pending ceremony in `service_auth.verifications`, signed with the tenant's cookie secret.
 */
export const CHALLENGE_COOKIE = '__Secure-slipway.passkey_challenge';
/** Better Auth's `maxAgeInSeconds` for a ceremony. */
export const CHALLENGE_TTL_SECONDS = 300;

export function challengeCookie(tenant: Tenant, token: string): string {
  return signedCookie(tenant, CHALLENGE_COOKIE, token, CHALLENGE_TTL_SECONDS);
}

export function clearedChallengeCookie(tenant: Tenant): string {
  return clearedCookie(tenant, CHALLENGE_COOKIE);
}

/** The ceremony key from the request's one challenge cookie signed by this tenant; null otherwise (absent, doubled, forged, another tenant's). */
export function challengeTokenFrom(tenant: Tenant, cookieHeader: string | undefined): string | null {
  return readSignedCookie(tenant, cookieHeader, CHALLENGE_COOKIE);
}
