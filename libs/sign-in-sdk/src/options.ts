export interface AuthServerOptions {
  /** `SERVICE_AUTH_BASE_URL`: the application's sign-in service. */
  baseUrl: string;
  /** `SERVICE_AUTH_COOKIE_SECRET`: verifies session cookies and signs the visitor's address. */
  cookieSecret: string;
  /** `SERVICE_AUTH_JWKS_URL` (default `${baseUrl}/jwks`). */
  jwksUrl?: string;
  /** `DATABASE_URL`: the application's own database, where `service_auth` lives. */
  databaseUrl?: string;
  /** Where the handler is mounted on the app's server (default `/api/auth`). */
  mountPath?: string;
  /** Sessions end this many days after sign-in however active (the service's AUTH_SESSION_ABSOLUTE_DAYS, default 30). */
  absoluteSessionDays?: number;
}

/** Options from the variables the platform injects. */
export function optionsFromEnv(env: Record<string, string | undefined> = process.env): AuthServerOptions {
  const baseUrl = env['SERVICE_AUTH_BASE_URL'];
  const cookieSecret = env['SERVICE_AUTH_COOKIE_SECRET'];
  if (!baseUrl || !cookieSecret) {
    throw new Error(
      '@slipway/sign-in-sdk needs SERVICE_AUTH_BASE_URL and SERVICE_AUTH_COOKIE_SECRET (slipway auth env --write .env, or deploy with sign-in on)',
    );
  }
  return { baseUrl, cookieSecret, jwksUrl: env['SERVICE_AUTH_JWKS_URL'], databaseUrl: env['DATABASE_URL'] };
}
