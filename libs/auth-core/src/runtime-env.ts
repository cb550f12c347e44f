import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/db';
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

/**
 * What the platform injects into a deploy of this application: the sign-in variables while
 * sign-in is on, and `DATABASE_URL` of the application's own database — unless the project set
 * its own `SERVICE_AUTH_BASE_URL` (then nothing of sign-in) or `DATABASE_URL` (never overwritten).
 */
export async function signInRuntimeEnv(prisma: PrismaClient, keyring: Keyring, applicationId: string, config: RuntimeEnvConfig): Promise<SignInRuntimeEnv> {
  const app = await prisma.application.findUnique({
    where: { id: applicationId },
    select: {
      slug: true,
      signInService: { select: { cookieSecret: true } },
      database: { select: { databaseName: true, roleName: true, password: true } },
      secrets: { where: { name: { in: ['SERVICE_AUTH_BASE_URL', 'DATABASE_URL'] } }, select: { name: true } },
    },
  });
  const env: SignInRuntimeEnv = { runtime: {}, buildTime: {} };
  if (!app) return env;
  const projectSets = new Set(app.secrets.map((s) => s.name));
  if (app.database && !projectSets.has('DATABASE_URL')) {
    const password = decryptEnvelopeToString(keyring, app.database.password, envelopeBinding.databasePassword(applicationId));
    env.runtime['DATABASE_URL'] = tenantDatabaseUrl(config.appDatabasesUrl, app.database, password);
  }
  if (app.signInService && !projectSets.has('SERVICE_AUTH_BASE_URL')) {
    const cookieSecret = decryptEnvelopeToString(keyring, app.signInService.cookieSecret, envelopeBinding.cookieSecret(applicationId));
    const variables = signInVariables(config.authPublicUrl, app.slug, cookieSecret);
    Object.assign(env.runtime, variables);
    env.buildTime['VITE_SERVICE_AUTH_URL'] = variables['VITE_SERVICE_AUTH_URL']!;
  }
  return env;
}
