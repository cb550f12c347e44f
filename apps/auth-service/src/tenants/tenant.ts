import type { Pool } from 'pg';

/** Per-application settings kept in sign_in_services.settings (JSON). */
export interface SignInSettings {
  /** Sign-in refuses unverified emails; sign-up sends a verification email and no session. Default false. */
  requireEmailVerification?: boolean;
  /** Social providers with the owner's own OAuth app; `clientSecret` is an envelope, base64. */
  socialProviders?: Record<string, { clientId: string; clientSecret: string }>;
}

/**
 * One application's sign-in service, as resolved from `/a/{slug}`. `Id` is the type of its
 * application id: `string` wherever code holds one tenant; code generic over two tenants gets two
 * types, so their database handles (TenantDb) cannot be swapped.
 */
export interface Tenant<Id extends string = string> {
  applicationId: Id;
  slug: string;
  /** `{auth_url}`: also the JWT issuer and audience. */
  authUrl: string;
  cookieSecret: Buffer;
  trustedOrigins: Set<string>;
  allowLocalhost: boolean;
  settings: SignInSettings;
  databaseUrl: string;
}

declare const tenantDb: unique symbol;

/**
 * A tenant's database handle: the pool connected as that application's own role. The compiler
 * tells it apart from a plain `pg.Pool` (the platform's, or any pool made elsewhere), which lacks
 * the brand, and from another tenant's handle (`TenantDb<A>` is not a `TenantDb<B>`). Made in one
 * place, `TenantsService.db(tenant)`, from a tenant it resolved; every sign-in repository method
 * takes it first. At run time it is the pool itself (the brand is a type only, so nothing is
 * wrapped on the hot path). Every query names `service_auth.*` explicitly.
 */
export type TenantDb<Id extends string = string> = Pool & { readonly [tenantDb]: Id };
