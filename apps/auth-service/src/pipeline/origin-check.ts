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
