import { AuthError } from '../common/index.js';
import { isTrustedOrigin } from '../pipeline/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * The relying party is the page's own address: the request's `Origin`, which must be one of this
 * application's trusted origins (or, while allowLocalhost, a loopback origin). Its hostname is
 * the RP ID, so a passkey is bound to the host it was made on (WebAuthn's rule: a credential is
 * only offered to pages whose host is its RP ID or under it; we never widen it to a parent).
 */
export interface RelyingParty {
  origin: string;
  rpID: string;
}

/**
 * For the options requests (GET): a browser sends no `Origin` on a same-origin GET (the page
 * calling the app's own `/api/auth` proxy), so the `Referer`'s origin stands in; either must be
 * trusted (403 INVALID_ORIGIN otherwise). With neither, null: the options carry no RP ID and the
 * browser uses the page's own host, which verification then checks against the POST's Origin.
 */
export function relyingPartyOfOptionsRequest(tenant: Tenant, origin: string | undefined, referer: string | undefined): RelyingParty | null {
  let candidate: string | null = null;
  if (origin !== undefined) candidate = origin;
  else if (referer !== undefined) {
    try {
      candidate = new URL(referer).origin;
    } catch {
      candidate = 'null';
    }
  }
  if (candidate === null) return null;
  if (candidate === 'null' || !isTrustedOrigin(tenant, candidate)) throw new AuthError(403, 'INVALID_ORIGIN', 'Invalid origin');
  return relyingPartyOf(candidate);
}

/** For the verifications (POST): the pipeline already refused a missing or untrusted Origin; checked again here, never assumed. */
export function relyingPartyOfVerification(tenant: Tenant, origin: string | undefined): RelyingParty {
  if (!origin || origin === 'null') throw new AuthError(403, 'MISSING_OR_NULL_ORIGIN', 'Missing or null Origin');
  if (!isTrustedOrigin(tenant, origin)) throw new AuthError(403, 'INVALID_ORIGIN', 'Invalid origin');
  return relyingPartyOf(origin);
}

function relyingPartyOf(value: string): RelyingParty {
  const url = new URL(value);
  // WebAuthn compares the RP ID with the host without brackets or port; an IPv6 literal is no valid RP ID anyway.
  return { origin: url.origin, rpID: url.hostname };
}
