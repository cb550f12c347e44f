import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { decryptEnvelopeToString, envelopeBinding, randomAlphanumeric, type Keyring } from '@slipway/crypto';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError, withQuery, type AuthResult } from '../common/index.js';
import { soleCookie } from '../cookies/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { KEYRING } from '../platform/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, type SocialProfile, type UserRow } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import { SOCIAL_PROVIDERS, endpointsFor, type SocialProvider } from './social-providers.js';
import type { SocialSignInInput } from './dto/social.dto.js';

const STATE_COOKIE = '__Secure-slipway.oauth_state';
const STATE_TTL_SECONDS = 600;
const PURPOSE = 'oauth-state';

interface PendingSignIn {
  provider: string;
  codeVerifier: string;
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
  ) {}

  async start(tenant: Tenant, input: SocialSignInInput): Promise<AuthResult> {
    const { provider, clientId } = this.providerOf(tenant, input.provider);
    const state = randomAlphanumeric(32);
    const codeVerifier = randomAlphanumeric(64);
    const pending: PendingSignIn = { provider: provider.id, codeVerifier, callbackURL: input.callbackURL, errorCallbackURL: input.errorCallbackURL, newUserCallbackURL: input.newUserCallbackURL };
    await this.verifications.create(this.tenants.db(tenant), PURPOSE, state, JSON.stringify(pending), STATE_TTL_SECONDS);
    const url = new URL(endpointsFor(provider, this.config.AUTH_OAUTH_PROVIDER_URLS).authorize);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', clientId);
    url.searchParams.set('redirect_uri', this.redirectUri(tenant, provider));
    url.searchParams.set('scope', provider.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', createHash('sha256').update(codeVerifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    const cookie = `${STATE_COOKIE}=${encodeURIComponent(`${state}.${this.sign(tenant, state)}`)}; Max-Age=${STATE_TTL_SECONDS}; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
    return { body: { url: url.toString(), redirect: !input.disableRedirect }, cookies: [cookie] };
  }

  async callback(tenant: Tenant, providerId: string, query: { code?: string; state?: string; error?: string }, meta: RequestMeta): Promise<AuthResult> {
    const clearState = `${STATE_COOKIE}=; Max-Age=0; Path=/a/${tenant.slug}; HttpOnly; Secure; SameSite=Lax`;
    const state = query.state ?? '';
    const pendingJson = state && this.stateCookieMatches(tenant, meta.cookieHeader, state) ? await this.verifications.consume(this.tenants.db(tenant), PURPOSE, state) : null;
    const pending = pendingJson ? (JSON.parse(pendingJson) as PendingSignIn) : null;
    const fail = (code: string): AuthResult => ({ redirect: withQuery(pending?.errorCallbackURL ?? pending?.callbackURL ?? `${tenant.authUrl}/error`, 'error', code), cookies: [clearState] });
    if (!pending || pending.provider !== providerId) return fail('state_mismatch');
    if (query.error || !query.code) return fail(query.error ?? 'no_code');

    const { provider, clientId, clientSecret } = this.providerOf(tenant, providerId);
    let profile: SocialProfile | null;
    let scope: string | null;
    try {
      const exchanged = await this.exchange(tenant, provider, clientId, clientSecret, query.code, pending.codeVerifier);
      scope = exchanged.scope;
      const found = await provider.profile(endpointsFor(provider, this.config.AUTH_OAUTH_PROVIDER_URLS), exchanged.accessToken);
      profile = found ? { ...found, providerId: provider.id } : null;
    } catch (error) {
      this.logger.warn(`${tenant.slug}: ${providerId} sign-in failed: ${(error as Error).message}`);
      return fail('oauth_provider_error');
    }
    if (!profile) return fail('email_not_found');

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

  private async exchange(tenant: Tenant, provider: SocialProvider, clientId: string, clientSecret: string, code: string, codeVerifier: string): Promise<{ accessToken: string; scope: string | null }> {
    const res = await fetch(endpointsFor(provider, this.config.AUTH_OAUTH_PROVIDER_URLS).token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: this.redirectUri(tenant, provider), client_id: clientId, client_secret: clientSecret, code_verifier: codeVerifier }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; scope?: string; error?: string };
    if (!res.ok || !body.access_token) throw new Error(`token endpoint answered ${res.status} ${body.error ?? ''}`.trim());
    return { accessToken: body.access_token, scope: body.scope ?? null };
  }

  private providerOf(tenant: Tenant, id: string): { provider: SocialProvider; clientId: string; clientSecret: string } {
    const provider = SOCIAL_PROVIDERS[id];
    const settings = tenant.settings.socialProviders?.[id];
    if (!provider || !settings) throw new AuthError(404, 'PROVIDER_NOT_FOUND', 'Provider not found');
    const clientSecret = decryptEnvelopeToString(this.keyring, Buffer.from(settings.clientSecret, 'base64'), envelopeBinding.oauthClientSecret(tenant.applicationId, id));
    return { provider, clientId: settings.clientId, clientSecret };
  }

  private redirectUri(tenant: Tenant, provider: SocialProvider): string {
    return `${tenant.authUrl}/callback/${provider.id}`;
  }

  private sign(tenant: Tenant, state: string): string {
    return createHmac('sha256', tenant.cookieSecret).update(`oauth-state:${state}`).digest('base64url');
  }

  private stateCookieMatches(tenant: Tenant, header: string | undefined, state: string): boolean {
    // Exactly one state cookie: a second one (tossed by a sibling host) makes the callback fail.
    const raw = soleCookie(header, STATE_COOKIE);
    if (raw === null) return false;
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return false;
    }
    const expected = Buffer.from(`${state}.${this.sign(tenant, state)}`);
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
