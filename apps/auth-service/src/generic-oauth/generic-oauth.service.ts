import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { AuthError, type AuthResult } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { KEYRING } from '../platform/index.js';
import { SessionsService } from '../sessions/index.js';
import { OAuthProviderSources, SocialService, type OAuthProvider, type OAuthProviderSource } from '../social/index.js';
import type { Tenant } from '../tenants/index.js';
import { OidcDiscovery } from './oidc-discovery.js';
import type { OAuth2LinkInput, OAuth2SignInInput } from './dto/generic-oauth.dto.js';

/** A tenant's provider ids: as the owners' API accepts them (never a built-in provider's). */
export const OIDC_PROVIDER_ID = /^[a-z0-9-]{1,32}$/;
const RESERVED = new Set(['github', 'google']);

/** Better Auth's `parseStringBoolean`: `true` or `"true"`. */
const verifiedClaim = (value: unknown) => value === true || value === 'true';
const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/**
 * Generic OpenID Connect providers (Better Auth's genericOAuth): each tenant's
 * `settings.oidcProviders`, reached through the social routes (`/sign-in/social`,
 * `/callback/:id` — Better Auth 1.7's way) and through the older genericOAuth routes
 * (`/sign-in/oauth2`, `/oauth2/callback/:providerId`, `/oauth2/link`). The flow itself
 * (state, PKCE, the state cookie, linking rules) is social/'s; this adds discovery, the nonce,
 * the id_token's verification and userinfo, every request under the SSRF policy.
 */
@Injectable()
export class GenericOAuthService implements OAuthProviderSource, OnModuleInit {
  private readonly logger = new Logger('GenericOAuthService');

  constructor(
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly discovery: OidcDiscovery,
    private readonly sources: OAuthProviderSources,
    private readonly social: SocialService,
    private readonly sessions: SessionsService,
  ) {}

  onModuleInit(): void {
    this.sources.register(this);
  }

  /** The tenant's OIDC provider of that id, discovered; null when it has none (so: PROVIDER_NOT_FOUND). */
  async resolve(tenant: Tenant, id: string): Promise<OAuthProvider | null> {
    const settings = Object.hasOwn(tenant.settings.oidcProviders ?? {}, id) ? tenant.settings.oidcProviders![id] : undefined;
    if (!settings || !OIDC_PROVIDER_ID.test(id) || RESERVED.has(id)) return null;
    let meta;
    try {
      meta = await this.discovery.metadata(settings.issuer);
    } catch (error) {
      this.logger.warn(`${tenant.slug}: discovery of ${id} failed: ${(error as Error).message}`);
      // Better Auth's answer when a provider's discovery left it unusable.
      throw new AuthError(400, 'INVALID_OAUTH_CONFIGURATION', 'Invalid OAuth configuration');
    }
    const clientSecret = () =>
      decryptEnvelopeToString(this.keyring, Buffer.from(settings.clientSecret, 'base64'), envelopeBinding.oauthClientSecret(tenant.applicationId, id));
    const scopes = [...new Set(['openid', 'email', 'profile', ...(settings.scopes ?? [])])];
    return {
      id,
      clientId: settings.clientId,
      scopes,
      authorizeUrl: meta.authorization_endpoint,
      usesNonce: true,
      exchange: async (form) => {
        const { status, body } = await this.discovery.tokenRequest(meta.token_endpoint, {
          ...form,
          client_id: settings.clientId,
          client_secret: clientSecret(),
        });
        if (status !== 200 || typeof body['access_token'] !== 'string')
          throw new Error(`token endpoint answered ${status} ${text(body['error']) ?? ''}`.trim());
        return { accessToken: body['access_token'], idToken: text(body['id_token']), scope: text(body['scope']) ?? null };
      },
      profile: async (tokens, nonce) => {
        // The scope asks for openid, so the answer carries an id_token: verified, or no sign-in.
        if (!tokens.idToken || !nonce) throw new Error('the token endpoint answered no id_token');
        const claims: Record<string, unknown> = { ...(await this.discovery.verifyIdToken(meta, tokens.idToken, settings.clientId, nonce)) };
        const sub = claims['sub'] as string;
        if (!text(claims['email']) && meta.userinfo_endpoint) {
          const info = await this.discovery.userInfo(meta.userinfo_endpoint, tokens.accessToken);
          // OpenID Connect Core §5.3.2: userinfo's sub must be the id_token's, or its answer is not used.
          if (info['sub'] !== sub) throw new Error('userinfo sub differs from the id_token’s');
          for (const key of ['email', 'email_verified', 'name', 'picture', 'preferred_username']) if (claims[key] === undefined) claims[key] = info[key];
        }
        const email = text(claims['email']);
        if (!email) return null;
        return {
          accountId: sub,
          email,
          emailVerified: verifiedClaim(claims['email_verified']),
          name: text(claims['name']) ?? text(claims['preferred_username']) ?? email,
          image: text(claims['picture']) ?? null,
        };
      },
    };
  }

  /** `POST /sign-in/oauth2`: only the tenant's OIDC providers (not GitHub/Google), as genericOAuth's route. */
  async signIn(tenant: Tenant, input: OAuth2SignInInput): Promise<AuthResult> {
    this.requireProvider(tenant, input.providerId);
    return this.social.start(tenant, {
      provider: input.providerId,
      callbackURL: input.callbackURL,
      errorCallbackURL: input.errorCallbackURL,
      newUserCallbackURL: input.newUserCallbackURL,
      disableRedirect: input.disableRedirect,
      scopes: input.scopes,
    });
  }

  /** `GET /oauth2/callback/:providerId`: the same callback as `/callback/:providerId`. */
  callback(tenant: Tenant, providerId: string, query: { code?: string; state?: string; error?: string }, meta: RequestMeta): Promise<AuthResult> {
    return this.social.callback(tenant, providerId, query, meta);
  }

  /** `POST /oauth2/link`: adds the provider's account to the signed-in user (its email must be the user's). */
  async link(tenant: Tenant, input: OAuth2LinkInput, meta: RequestMeta): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    this.requireProvider(tenant, input.providerId);
    return this.social.start(
      tenant,
      {
        provider: input.providerId,
        callbackURL: input.callbackURL,
        errorCallbackURL: input.errorCallbackURL,
        disableRedirect: input.disableRedirect,
        scopes: input.scopes,
      },
      current.user.id,
    );
  }

  private requireProvider(tenant: Tenant, id: string): void {
    if (!OIDC_PROVIDER_ID.test(id) || RESERVED.has(id) || !Object.hasOwn(tenant.settings.oidcProviders ?? {}, id))
      throw new AuthError(404, 'PROVIDER_NOT_FOUND', 'Provider not found');
  }
}
