import { injectedEnv } from '@slipway/sign-in-core';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { asApplicationId, type ApplicationInputs } from '@slipway/platform-data';

/**
 * A Node release's environment: its secrets, plus what the platform injects (libs/sign-in-core
 * `injectedEnv`: `DATABASE_URL` of the application's own database and `SERVICE_AUTH_*` while
 * sign-in is on — the project's own choices always win). A preview gets its parent's: the
 * `preview` scope of its secrets, its database and its sign-in service.
 */
export async function appEnvironment(
  inputs: ApplicationInputs,
  keyring: Keyring,
  applicationId: string,
  platform: { databaseUrl: string; authPublicUrl: string },
): Promise<{ env: Record<string, string>; hasDatabase: boolean }> {
  const row = await inputs.forRuntime(asApplicationId(applicationId));
  if (!row) throw new Error(`application ${applicationId} no longer exists`);
  const sealedFor = row.sealedFor;
  const secrets: Record<string, string> = {};
  for (const s of row.secrets) secrets[s.name] = decryptEnvelopeToString(keyring, s.value, envelopeBinding.secret(sealedFor, s.name, s.scope));
  const injected = injectedEnv(
    {
      slug: row.slug,
      cookieSecret: row.cookieSecret ? decryptEnvelopeToString(keyring, row.cookieSecret, envelopeBinding.cookieSecret(sealedFor)) : null,
      database: row.database
        ? { ...row.database, password: decryptEnvelopeToString(keyring, row.database.password, envelopeBinding.databasePassword(sealedFor)) }
        : null,
      projectSecretNames: Object.keys(secrets),
    },
    { authPublicUrl: platform.authPublicUrl, appDatabasesUrl: platform.databaseUrl },
  );
  return { env: { ...injected.runtime, ...secrets }, hasDatabase: row.database !== null };
}

/**
 * The host the local runtime's health check asks at (`GET /` with `Host: 127.0.0.1:<port>`). Only
 * the platform sends it: the edge routes by Host, and no application answers at an address.
 */
const HEALTH_CHECK_HOST = '127.0.0.1';

/**
 * `NG_ALLOWED_HOSTS` for an Angular SSR server (`@angular/ssr` answers 400 to a request for any
 * host not listed, and prints an `ERROR: Bad Request` that the first-minute watch would count):
 * the application's own hosts — its address under each APPS_DOMAIN and its verified custom
 * domains — and the health check's. Angular compares the request's hostname
 * (`new URL('http://' + Host)`: lower case, punycode, no port) with each entry exactly (or as
 * `*.suffix`), so the entries carry no port: `my-app.localhost`, not `my-app.localhost:8080`.
 */
export function angularAllowedHosts(slug: string, appsDomains: string[], hostnames: string[]): string {
  const hostname = (host: string) => new URL(`http://${host}`).hostname;
  return [...new Set([...appsDomains.map((domain) => hostname(`${slug}.${domain}`)), ...hostnames.map(hostname), HEALTH_CHECK_HOST])].join(',');
}
