import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import type { RouteRepository } from '../routing/route.repository.js';

/**
 * A Node release's environment: its secrets, `DATABASE_URL` of the application's own database
 * (unless a secret sets one), and `SERVICE_AUTH_*` when sign-in is on and the project did not set
 * its own `SERVICE_AUTH_BASE_URL` (the project's own choice always wins).
 */
export async function appEnvironment(routes: RouteRepository, keyring: Keyring, applicationId: string, slug: string, platform: { databaseUrl: string; authPublicUrl: string }): Promise<Record<string, string>> {
  const row = await routes.secrets(applicationId);
  const env: Record<string, string> = {};
  for (const s of row.secrets) env[s.name] = decryptEnvelopeToString(keyring, s.value, envelopeBinding.secret(applicationId, s.name));
  if (row.database && !env['DATABASE_URL']) {
    const url = new URL(platform.databaseUrl);
    url.username = row.database.roleName;
    url.password = decryptEnvelopeToString(keyring, row.database.password, envelopeBinding.databasePassword(applicationId));
    url.pathname = `/${row.database.databaseName}`;
    env['DATABASE_URL'] = url.toString();
  }
  if (row.cookieSecret && !env['SERVICE_AUTH_BASE_URL']) {
    const base = `${platform.authPublicUrl}/a/${slug}`;
    env['SERVICE_AUTH_BASE_URL'] = base;
    env['SERVICE_AUTH_URL'] = base;
    env['SERVICE_AUTH_JWKS_URL'] = `${base}/jwks`;
    env['SERVICE_AUTH_COOKIE_SECRET'] = decryptEnvelopeToString(keyring, row.cookieSecret, envelopeBinding.cookieSecret(applicationId));
  }
  return env;
}
