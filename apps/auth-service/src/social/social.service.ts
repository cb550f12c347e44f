import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { decryptEnvelopeToString, envelopeBinding, randomAlphanumeric, type Keyring } from '@slipway/crypto';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError, withQuery, type AuthResult } from '../common/index.js';
import { clearedCookie, readSignedCookie, signedCookie } from '../cookies/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { KEYRING } from '../platform/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, type SocialProfile, type UserRow } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import { OAuthProviderSources, type OAuthProvider, type TokenSet } from './oauth-provider.js';
import { SOCIAL_PROVIDERS, endpointsFor } from './social-providers.js';
import type { SocialSignInInput } from './dto/social.dto.js';

const STATE_COOKIE = '__Secure-slipway.oauth_state';
const STATE_TTL_SECONDS = 600;
const PURPOSE = 'oauth-state';

interface PendingSignIn {
  provider: string;
  codeVerifier: string;
  /** The redirect_uri sent with the authorize request (the token request repeats it). */
  redirectUri?: string | undefined;
  /** OpenID Connect: the nonce the id_token must carry. */
  nonce?: string | undefined;
  /** Linking (`/oauth2/link`): the signed-in user the account is added to; no session is made. */
  linkUserId?: string | undefined;
  callbackURL?: string | undefined;
  errorCallbackURL?: string | undefined;
  newUserCallbackURL?: string | undefined;
}

/**
 * Social sign-in with the owner's own OAuth app (authorization code + PKCE). The state lives in
 * `service_auth.verifications` and in a signed cookie, so a callback only completes in the
 * browser that started it.
 */
@Injectable()
export class SocialService {
  private readonly logger = new Logger('SocialService');

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly verifications: VerificationsRepository,
    private readonly sessions: SessionsService,
    private readonly sources: OAuthProviderSources,
  ) {}

  /** `linkUserId`: add the provider's account to this (signed-in) user instead of signing in. */
  async start(tenant: Tenant, input: SocialSignInInput, linkUserId?: string): Promise<AuthResult> {
    const provider = await this.providerOf(tenant, input.provider);
    const state = randomAlphanumeric(32);
    const codeVerifier = randomAlphanumeric(64);
    const nonce = provider.usesNonce ? randomAlphanumeric(32) : undefined;
    const redirectUri = this.redirectUri(tenant, provider.id);
    const pending: PendingSignIn = {
      provider: provider.id,
      codeVerifier,
      redirectUri,
      nonce,
      linkUserId,
      callbackURL: input.callbackURL,
      errorCallbackURL: input.errorCallbackURL,
      newUserCallbackURL: input.newUserCallbackURL,
    };
    await this.verifications.create(this.tenants.db(tenant), PURPOSE, state, JSON.stringify(pending), STATE_TTL_SECONDS);
    const url = new URL(provider.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', [...new Set([...provider.scopes, ...(input.scopes ?? [])])].join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', createHash('sha256').update(codeVerifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    if (nonce) url.searchParams.set('nonce', nonce);
    const cookie = signedCookie(tenant, STATE_COOKIE, state, STATE_TTL_SECONDS);
    return { body: { url: url.toString(), redirect: !input.disableRedirect }, cookies: [cookie] };
  }

  async callback(tenant: Tenant, providerId: string, query: { code?: string; state?: string; error?: string }, meta: RequestMeta): Promise<AuthResult> {
    const clearState = clearedCookie(tenant, STATE_COOKIE);
    const state = query.state ?? '';
    const pendingJson =
      state && this.stateCookieMatches(tenant, meta.cookieHeader, state) ? await this.verifications.consume(this.tenants.db(tenant), PURPOSE, state) : null;
    const pending = pendingJson ? (JSON.parse(pendingJson) as PendingSignIn) : null;
    const fail = (code: string): AuthResult => ({
      redirect: withQuery(pending?.errorCallbackURL ?? pending?.callbackURL ?? `${tenant.authUrl}/error`, 'error', code),
      cookies: [clearState],
    });
    if (!pending || pending.provider !== providerId) return fail('state_mismatch');
    if (query.error || !query.code) return fail(query.error ?? 'no_code');

    let profile: SocialProfile | null;
    let scope: string | null;
    try {
      const provider = await this.providerOf(tenant, providerId);
      const exchanged = await provider.exchange({
        grant_type: 'authorization_code',
        code: query.code,
        redirect_uri: pending.redirectUri ?? this.redirectUri(tenant, provider.id),
        code_verifier: pending.codeVerifier,
      });
      scope = exchanged.scope;
      const found = await provider.profile(exchanged, pending.nonce);
      profile = found ? { ...found, providerId: provider.id } : null;
    } catch (error) {
      this.logger.warn(`${tenant.slug}: ${providerId} sign-in failed: ${(error as Error).message}`);
      return fail('oauth_provider_error');
    }
    if (!profile) return fail('email_not_found');
    if (pending.linkUserId) {
      const linked = await this.link(tenant, pending.linkUserId, profile, scope);
      return linked
        ? { redirect: pending.callbackURL ?? '/', cookies: [clearState] }
        : fail(linked === null ? 'account_already_linked_to_different_user' : "email_doesn't_match");
    }

    const resolved = await this.userFor(tenant, profile, scope);
    if (!resolved) return fail('account_not_linked');
    const session = await this.sessions.start(tenant, resolved.user, meta);
    const target = (resolved.isNew ? pending.newUserCallbackURL : undefined) ?? pending.callbackURL ?? '/';
    return { redirect: target, cookies: [clearState, session.cookie] };
  }

  /** Known account → its user; same verified email → link; otherwise a new user. An unverified claim never takes over an account. */
  private async userFor(tenant: Tenant, profile: SocialProfile, scope: string | null): Promise<{ user: UserRow; isNew: boolean } | null> {
    const db = this.tenants.db(tenant);
    const linked = await this.users.findByAccount(db, profile.providerId, profile.accountId);
    if (linked) return { user: linked, isNew: false };
    const existing = await this.users.findByEmail(db, profile.email);
    if (existing) {
      if (!profile.emailVerified) return null;
      await this.users.linkAccount(db, existing.id, profile, scope);
      return { user: existing, isNew: false };
    }
    const created = await this.users.createFromProfile(db, profile);
    if (!created) return null;
    await this.users.linkAccount(db, created.id, profile, scope);
    return { user: created, isNew: true };
  }

  /** Adds the account to the user: false when the provider's email is not the user's, null when the account belongs to another user. */
  private async link(tenant: Tenant, userId: string, profile: SocialProfile, scope: string | null): Promise<boolean | null> {
    const db = this.tenants.db(tenant);
    const owner = await this.users.findByAccount(db, profile.providerId, profile.accountId);
    if (owner && owner.id !== userId) return null;
    const user = await this.users.findById(db, userId);
    if (!user) return null;
    if (user.email.toLowerCase() !== profile.email.toLowerCase()) return false;
    await this.users.linkAccount(db, userId, profile, scope);
    return true;
  }

  /** The tenant's provider of that id: GitHub or Google as configured, else one a registered source knows; 404 PROVIDER_NOT_FOUND otherwise. */
  async providerOf(tenant: Tenant, id: string): Promise<OAuthProvider> {
    const provider = SOCIAL_PROVIDERS[id];
    const settings = tenant.settings.socialProviders?.[id];
    if (provider && settings) {
      const clientSecret = decryptEnvelopeToString(
        this.keyring,
        Buffer.from(settings.clientSecret, 'base64'),
        envelopeBinding.oauthClientSecret(tenant.applicationId, id),
      );
      const endpoints = endpointsFor(provider, this.config.AUTH_OAUTH_PROVIDER_URLS);
      return {
        id: provider.id,
        clientId: settings.clientId,
        scopes: provider.scopes,
        authorizeUrl: endpoints.authorize,
        usesNonce: false,
        exchange: async (form) => {
          const res = await fetch(endpoints.token, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: new URLSearchParams({ ...form, client_id: settings.clientId, client_secret: clientSecret }),
            signal: AbortSignal.timeout(10_000),
          });
          const body = (await res.json().catch(() => ({}))) as { access_token?: string; scope?: string; error?: string };
          if (!res.ok || !body.access_token) throw new Error(`token endpoint answered ${res.status} ${body.error ?? ''}`.trim());
          return { accessToken: body.access_token, scope: body.scope ?? null } satisfies TokenSet;
        },
        profile: (tokens) => provider.profile(endpoints, tokens.accessToken),
      };
    }
    const other = SOCIAL_PROVIDERS[id] ? null : await this.sources.resolve(tenant, id);
    if (!other) throw new AuthError(404, 'PROVIDER_NOT_FOUND', 'Provider not found');
    return other;
  }

  /** The redirect_uri registered with the provider: Better Auth's `{baseURL}/callback/{id}`, for every kind of provider. */
  redirectUri(tenant: Tenant, providerId: string): string {
    return `${tenant.authUrl}/callback/${providerId}`;
  }

  /** Exactly one state cookie, signed by this tenant, naming this state: a second one (tossed by a sibling host) makes the callback fail. */
  private stateCookieMatches(tenant: Tenant, header: string | undefined, state: string): boolean {
    const signed = readSignedCookie(tenant, header, STATE_COOKIE);
    if (signed === null) return false;
    const [a, b] = [Buffer.from(signed), Buffer.from(state)];
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
