/** The sign-in service's public address for one application: `{auth_url}`. */
export function signInBaseUrl(authPublicUrl: string, slug: string): string {
  return `${authPublicUrl.replace(/\/+$/, '')}/a/${slug}`;
}

/** Where a backend finds the application's public signing keys. */
export function signInJwksUrl(authPublicUrl: string, slug: string): string {
  return `${signInBaseUrl(authPublicUrl, slug)}/jwks`;
}

/** The four variables an application needs to use its sign-in service, in a stable order. */
export function signInVariables(authPublicUrl: string, slug: string, cookieSecret: string): Record<string, string> {
  const baseUrl = signInBaseUrl(authPublicUrl, slug);
  return {
    SERVICE_AUTH_BASE_URL: baseUrl,
    SERVICE_AUTH_COOKIE_SECRET: cookieSecret,
    SERVICE_AUTH_JWKS_URL: signInJwksUrl(authPublicUrl, slug),
    VITE_SERVICE_AUTH_URL: baseUrl,
  };
}

/** `NAME=value` lines ready to append to a `.env` file (values here never need quoting). */
export function envFileText(variables: Record<string, string>): string {
  return Object.entries(variables)
    .map(([name, value]) => `${name}=${value}\n`)
    .join('');
}

/**
 * Project secrets that mean "the project runs its own sign-in / database": when set, the
 * platform refuses to switch sign-in on and injects none of its variables.
 */
export const PROJECT_OWNED_SIGN_IN_VARIABLES = ['SERVICE_AUTH_BASE_URL', 'DATABASE_URL'] as const;
