import { AuthError } from '../common/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * The developer's own machine, as the URL parser spells it after normalising (`127.1` and
 * `[0:0:0:0:0:0:0:1]` included). Not `*.localhost` nor `localhost.`: under a publishing domain
 * such a host is another tenant's application (`b.localhost:8080`), never this developer's.
 */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An `@` in the authority, even with empty credentials (`http://@localhost`, `http://:@host`). */
const USERINFO = /^[a-z][a-z0-9+.-]*:[/\\]*[^/?#\\]*@/i;

/**
 * An origin (or absolute URL) this tenant trusts: exactly one of its own trusted origins (scheme,
 * host and port), or, while it allows local development, an http(s) origin on a loopback host.
 * URLs carrying userinfo (`https://app.example.com@evil.com`, `http://x@localhost`) are refused.
 */
export function isTrustedOrigin(tenant: Tenant, value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username || url.password || USERINFO.test(value)) return false;
  if (tenant.trustedOrigins.has(url.origin)) return true;
  return tenant.allowLocalhost && LOOPBACK_HOSTS.has(url.hostname);
}

/** Every request that changes something must come from a trusted origin (CSRF defence). */
export function assertTrustedOrigin(tenant: Tenant, origin: string | undefined): void {
  if (!origin || origin === 'null') throw new AuthError(403, 'MISSING_OR_NULL_ORIGIN', 'Missing or null Origin');
  if (!isTrustedOrigin(tenant, origin)) throw new AuthError(403, 'INVALID_ORIGIN', 'Invalid origin');
}

const REDIRECT_FIELDS: Record<string, string> = {
  callbackURL: 'INVALID_CALLBACK_URL',
  redirectTo: 'INVALID_REDIRECT_URL',
  errorCallbackURL: 'INVALID_ERROR_CALLBACK_URL',
  newUserCallbackURL: 'INVALID_NEW_USER_CALLBACK_URL',
};

/** Redirect targets must be relative paths or trusted origins, so no one can bounce users (or tokens) elsewhere. */
export function assertSafeRedirects(tenant: Tenant, values: Record<string, unknown>): void {
  for (const [field, code] of Object.entries(REDIRECT_FIELDS)) {
    const value = values[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value === 'string' && isSafeRedirect(tenant, value)) continue;
    throw new AuthError(403, code, `Invalid ${field}`);
  }
}

function isSafeRedirect(tenant: Tenant, value: string): boolean {
  if (value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\')) return true;
  return isTrustedOrigin(tenant, value);
}
