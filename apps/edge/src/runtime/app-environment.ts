import { injectedEnv } from '@slipway/auth-core';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { asApplicationId, type ApplicationInputs } from '@slipway/platform-data';

/**
 * A Node release's environment: its secrets, plus what the platform injects (libs/auth-core
 * `injectedEnv`: `DATABASE_URL` of the application's own database and `SERVICE_AUTH_*` while
 * sign-in is on — the project's own choices always win).
 */
export async function appEnvironment(inputs: ApplicationInputs, keyring: Keyring, applicationId: string, slug: string, platform: { databaseUrl: string; authPublicUrl: string }): Promise<{ env: Record<string, string>; hasDatabase: boolean }> {
  const row = await inputs.forRuntime(asApplicationId(applicationId));
  const secrets: Record<string, string> = {};
  for (const s of row.secrets) secrets[s.name] = decryptEnvelopeToString(keyring, s.value, envelopeBinding.secret(applicationId, s.name));
  const injected = injectedEnv(
    {
      slug,
      cookieSecret: row.cookieSecret ? decryptEnvelopeToString(keyring, row.cookieSecret, envelopeBinding.cookieSecret(applicationId)) : null,
      database: row.database
        ? { ...row.database, password: decryptEnvelopeToString(keyring, row.database.password, envelopeBinding.databasePassword(applicationId)) }
        : null,
      projectSecretNames: Object.keys(secrets),
    },
    { authPublicUrl: platform.authPublicUrl, appDatabasesUrl: platform.databaseUrl },
  );
  return { env: { ...injected.runtime, ...secrets }, hasDatabase: row.database !== null };
}
