import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import type { ApplicationId, SignInServicesRepository } from '@slipway/platform-data';
import { signInVariables } from './sign-in-variables.js';
import { tenantDatabaseUrl } from './tenant-database.js';

export interface RuntimeEnvConfig {
  /** `AUTH_PUBLIC_URL`: the sign-in service's public origin. */
  authPublicUrl: string;
  /** A URL of the Postgres server holding application databases (its host and port are used). */
  appDatabasesUrl: string;
}

export interface SignInRuntimeEnv {
  /** Variables the running application receives. */
  runtime: Record<string, string>;
  /** Variables the build receives (only public ones: no secret ever reaches a bundle). */
  buildTime: Record<string, string>;
}

/** What is known about an application, decrypted, to decide what the platform injects. */
export interface InjectionFacts {
  slug: string;
  /** The sign-in service's cookie secret, or null while sign-in is off. */
  cookieSecret: string | null;
  /** The application's own database and its role's password, or null when it has none. */
  database: { databaseName: string; roleName: string; password: string } | null;
  /** Names of the project's own secrets (its choices win). */
  projectSecretNames: Iterable<string>;
}

/**
 * The one policy for what a deploy of an application receives from the platform: the sign-in
 * variables while sign-in is on, and `DATABASE_URL` of the application's own database — unless
 * the project set its own `SERVICE_AUTH_BASE_URL` (then nothing of sign-in) or `DATABASE_URL`
 * (never overwritten). Used by the build worker (build time), the edge (run time) and
 * `signInRuntimeEnv`.
 */
export function injectedEnv(facts: InjectionFacts, config: RuntimeEnvConfig): SignInRuntimeEnv {
  const env: SignInRuntimeEnv = { runtime: {}, buildTime: {} };
  const projectSets = new Set(facts.projectSecretNames);
  if (facts.database && !projectSets.has('DATABASE_URL')) {
    env.runtime['DATABASE_URL'] = tenantDatabaseUrl(config.appDatabasesUrl, facts.database, facts.database.password);
  }
  if (facts.cookieSecret && !projectSets.has('SERVICE_AUTH_BASE_URL')) {
    const variables = signInVariables(config.authPublicUrl, facts.slug, facts.cookieSecret);
    Object.assign(env.runtime, variables);
    env.buildTime['VITE_SERVICE_AUTH_URL'] = variables['VITE_SERVICE_AUTH_URL']!;
  }
  return env;
}

/** `injectedEnv` for an application, loading and decrypting what it needs from the platform database. */
export async function signInRuntimeEnv(
  signInServices: SignInServicesRepository,
  keyring: Keyring,
  applicationId: ApplicationId,
  config: RuntimeEnvConfig,
): Promise<SignInRuntimeEnv> {
  const app = await signInServices.findInjectionFacts(applicationId, ['SERVICE_AUTH_BASE_URL', 'DATABASE_URL']);
  if (!app) return { runtime: {}, buildTime: {} };
  return injectedEnv(
    {
      slug: app.slug,
      cookieSecret: app.signInService ? decryptEnvelopeToString(keyring, app.signInService.cookieSecret, envelopeBinding.cookieSecret(applicationId)) : null,
      database: app.database
        ? { ...app.database, password: decryptEnvelopeToString(keyring, app.database.password, envelopeBinding.databasePassword(applicationId)) }
        : null,
      projectSecretNames: app.secrets.map((s) => s.name),
    },
    config,
  );
}
