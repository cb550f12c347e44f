import { AuthError } from '../common/auth-error.js';
import type { Tenant } from '../tenants/tenant.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An origin (or absolute URL) the tenant trusts: exact scheme+host+port, or localhost while allowed. */
export function isTrustedOrigin(tenant: Tenant, value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (tenant.trustedOrigins.has(url.origin.toLowerCase())) return true;
  const host = url.hostname.toLowerCase();
  return tenant.allowLocalhost && (LOCAL_HOSTS.has(host) || host.endsWith('.localhost'));
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
