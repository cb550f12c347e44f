import { AuthError } from '../common/index.js';
import type { Pool } from 'pg';

/** Per-application settings kept in sign_in_services.settings (JSON). */
export interface SignInSettings {
  /** Sign-in refuses unverified emails; sign-up sends a verification email and no session. Default false. */
  requireEmailVerification?: boolean;
  /** Social providers with the owner's own OAuth app; `clientSecret` is an envelope, base64. */
  socialProviders?: Record<string, { clientId: string; clientSecret: string }>;
  /**
   * Generic OpenID Connect providers (Better Auth's genericOAuth), by provider id: the issuer
   * (its `/.well-known/openid-configuration` is read), the owner's client id and secret (an
   * envelope, base64, bound to `envelopeBinding.oauthClientSecret(appId, providerId)`), scopes.
   */
  oidcProviders?: Record<string, { issuer: string; clientId: string; clientSecret: string; scopes?: string[] }>;
  /** The sign-in plugins (issue 33), each off unless switched on here (off by default, as Better Auth's). */
  plugins?: SignInPlugins;
}

/** Each plugin's switch and options; a missing entry or `enabled: false` means its routes answer 404. */
export interface SignInPlugins {
  /** TOTP, backup codes, trusted devices, OTP by email (`twoFactorClient`). `issuer`: the name authenticator apps show (default: the application's slug). */
  twoFactor?: { enabled: boolean; issuer?: string };
  /** WebAuthn passkeys (`passkeyClient`); the relying party is the page's own trusted origin. */
  passkey?: { enabled: boolean };
  /** Sign-in links by email (`magicLinkClient`). */
  magicLink?: { enabled: boolean };
  /** One-time codes by email (`emailOTPClient`): sign-in, verification, password reset. */
  emailOTP?: { enabled: boolean };
  /** Organizations, members, invitations, roles (`organizationClient`). */
  organization?: { enabled: boolean; allowUserToCreateOrganization?: boolean };
  /** User administration by users whose role is admin (`adminClient`). */
  admin?: { enabled: boolean };
}

/** True when the tenant switched `plugin` on. */
export function pluginEnabled(tenant: { settings: SignInSettings }, plugin: keyof SignInPlugins): boolean {
  return tenant.settings.plugins?.[plugin]?.enabled === true;
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

/** A plugin's routes answer exactly as an unknown path does (404 NOT_FOUND) while the tenant has it off. */
export function requirePlugin(tenant: { settings: SignInSettings }, plugin: keyof SignInPlugins): void {
  if (!pluginEnabled(tenant, plugin)) throw new AuthError(404, 'NOT_FOUND', 'Not found');
}
