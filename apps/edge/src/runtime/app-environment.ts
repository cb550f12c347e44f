import { injectedEnv } from '@slipway/auth-core';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { asApplicationId, type ApplicationInputs } from '@slipway/platform-data';

/**
 * A Node release's environment: its secrets, plus what the platform injects (libs/auth-core
 * `injectedEnv`: `DATABASE_URL` of the application's own database and `SERVICE_AUTH_*` while
 * sign-in is on — the project's own choices always win). A preview gets its parent's: the
 * `preview` scope of its secrets, its database and its sign-in service.
 */
export async function appEnvironment(inputs: ApplicationInputs, keyring: Keyring, applicationId: string, platform: { databaseUrl: string; authPublicUrl: string }): Promise<{ env: Record<string, string>; hasDatabase: boolean }> {
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
