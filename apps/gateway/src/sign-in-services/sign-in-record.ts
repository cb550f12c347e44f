import { signInBaseUrl, signInJwksUrl } from '@slipway/sign-in-core';

export interface StoredSignInService {
  settings: unknown;
  createdAt: Date;
}

/** Public settings of a sign-in service: never a client secret. */
export function publicSettings(settings: unknown, allowLocalhost: boolean) {
  const s = (settings ?? {}) as { requireEmailVerification?: boolean; socialProviders?: Record<string, { clientId?: string }> };
  return {
    emailAndPassword: true,
    requireEmailVerification: s.requireEmailVerification === true,
    allowLocalhost,
    socialProviders: Object.keys(s.socialProviders ?? {}).sort(),
  };
}

/** The sign-in service record the platform calls answer with. */
export function signInRecord(
  authPublicUrl: string,
  app: { id: string; slug: string; allowLocalhost: boolean },
  service: StoredSignInService,
  trustedOrigins: string[],
) {
  return {
    applicationId: app.id,
    baseUrl: signInBaseUrl(authPublicUrl, app.slug),
    jwksUrl: signInJwksUrl(authPublicUrl, app.slug),
    trustedOrigins,
    settings: publicSettings(service.settings, app.allowLocalhost),
    createdAt: service.createdAt.toISOString(),
  };
}
