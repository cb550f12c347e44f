import type { Pool } from 'pg';

/** Per-application settings kept in sign_in_services.settings (JSON). */
export interface SignInSettings {
  /** Sign-in refuses unverified emails; sign-up sends a verification email and no session. Default false. */
  requireEmailVerification?: boolean;
  /** Social providers with the owner's own OAuth app; `clientSecret` is an envelope, base64. */
  socialProviders?: Record<string, { clientId: string; clientSecret: string }>;
}

/** One application's sign-in service, as resolved from `/a/{slug}`. */
export interface Tenant {
  applicationId: string;
  slug: string;
  /** `{auth_url}`: also the JWT issuer and audience. */
  authUrl: string;
  cookieSecret: Buffer;
  trustedOrigins: Set<string>;
  allowLocalhost: boolean;
  settings: SignInSettings;
  databaseUrl: string;
}

/** The tenant's database pool. Every query names `service_auth.*` explicitly. */
export type TenantDb = Pool;
