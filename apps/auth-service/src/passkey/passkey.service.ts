import { Injectable, Logger } from '@nestjs/common';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { randomAlphanumeric } from '@slipway/crypto';
import { AuthErrors, type AuthResult } from '../common/index.js';
import { SESSION_COOKIE, signedValue } from '../cookies/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, sessionView, type CurrentSession } from '../sessions/index.js';
import { TenantsService, requirePlugin, type Tenant, type TenantDb } from '../tenants/index.js';
import { UsersRepository, userView, type UserRow } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import { CHALLENGE_TTL_SECONDS, challengeCookie, challengeTokenFrom, clearedChallengeCookie } from './challenge-cookie.js';
import { PasskeyErrors } from './passkey-errors.js';
import { PasskeyRepository, passkeyView, type PasskeyRow } from './passkey.repository.js';
import { relyingPartyOfOptionsRequest, relyingPartyOfVerification } from './relying-party.js';
import type { RegisterOptionsQuery, VerifyAuthenticationInput, VerifyRegistrationInput } from './dto/passkey.dto.js';

const PURPOSE = 'passkey-challenge';
/** better-auth's default `session.freshAge`: adding a credential needs a sign-in within the last day. */
const FRESH_AGE_MS = 24 * 3600 * 1000;

/** What a pending ceremony keeps server-side (a `service_auth.verifications` row, single use). */
interface PendingCeremony {
  type: 'registration' | 'authentication';
  expectedChallenge: string;
  /** The registering user; for authentication, the signed-in user if any (else ''). */
  userId: string;
  /** The page the options were made for, when the request said (Origin or Referer); the verification must come from it. */
  origin: string | null;
}

/** The headers the relying party is read from. */
export interface PasskeyRequest {
  meta: RequestMeta;
  origin: string | undefined;
  referer: string | undefined;
}

/**
 * Better Auth's passkey plugin: registration and authentication ceremonies verified by
 * SimpleWebAuthn, the relying party being the page's own trusted origin.
 */
@Injectable()
export class PasskeyService {
  private readonly logger = new Logger('PasskeyService');

  constructor(
    private readonly tenants: TenantsService,
    private readonly passkeys: PasskeyRepository,
    private readonly users: UsersRepository,
    private readonly verifications: VerificationsRepository,
    private readonly sessions: SessionsService,
  ) {}

  /** `GET /passkey/generate-register-options` */
  async registrationOptions(tenant: Tenant, req: PasskeyRequest, query: RegisterOptionsQuery): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const rp = relyingPartyOfOptionsRequest(tenant, req.origin, req.referer);
    const { user } = await this.freshSession(tenant, req.meta);
    const db = this.tenants.db(tenant);
    const existing = await this.passkeys.listByUser(db, user.id);
    const options = await generateRegistrationOptions({
      rpName: tenant.slug,
      // Undefined: the browser takes the page's own host (see relyingPartyOfOptionsRequest).
      rpID: rp?.rpID as string,
      userID: new TextEncoder().encode(randomAlphanumeric(32)),
      userName: query.name || user.email || user.id,
      userDisplayName: user.email || user.id,
      attestationType: 'none',
      excludeCredentials: existing.map(descriptorOf),
      authenticatorSelection: {
        residentKey: 'preferred',
        userVerification: 'preferred',
        ...(query.authenticatorAttachment ? { authenticatorAttachment: query.authenticatorAttachment } : {}),
      },
    });
    const cookie = await this.pending(tenant, { type: 'registration', expectedChallenge: options.challenge, userId: user.id, origin: rp?.origin ?? null });
    return { body: options, cookies: [cookie], headers: { 'Cache-Control': 'no-store' } };
  }

  /** `POST /passkey/verify-registration` */
  async verifyRegistration(tenant: Tenant, req: PasskeyRequest, input: VerifyRegistrationInput): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const rp = relyingPartyOfVerification(tenant, req.origin);
    const current = await this.freshSession(tenant, req.meta);
    const ceremony = await this.takeCeremony(tenant, req.meta, 'registration', rp.origin);
    if (ceremony.userId !== current.user.id) throw PasskeyErrors.notAllowedToRegister();

    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verification = await verifyRegistrationResponse({
        response: input.response as unknown as RegistrationResponseJSON,
        expectedChallenge: ceremony.expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        requireUserVerification: false,
      });
    } catch (error) {
      this.logger.warn(`${tenant.slug}: passkey registration refused: ${(error as Error).message}`);
      throw PasskeyErrors.failedToVerifyRegistration();
    }
    const info = verification.registrationInfo;
    if (!verification.verified || !info) throw PasskeyErrors.failedToVerifyRegistration();

    const db = this.tenants.db(tenant);
    const transports = (input.response['response'] as { transports?: unknown } | undefined)?.transports;
    const row = await this.passkeys.create(db, {
      name: input.name || null,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64'),
      userId: current.user.id,
      credentialId: info.credential.id,
      counter: info.credential.counter,
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      transports: Array.isArray(transports) ? transports.filter((t): t is string => typeof t === 'string').join(',') : '',
      aaguid: info.aaguid,
    });
    if (!row) throw PasskeyErrors.failedToVerifyRegistration();
    if (!input.createSession) return { body: passkeyView(row), cookies: [clearedChallengeCookie(tenant)] };
    const started = await this.startSession(tenant, current.user, req.meta);
    return { body: { ...passkeyView(row), ...started.body }, cookies: [clearedChallengeCookie(tenant), started.cookie] };
  }

  /** `GET /passkey/generate-authenticate-options` */
  async authenticationOptions(tenant: Tenant, req: PasskeyRequest): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const rp = relyingPartyOfOptionsRequest(tenant, req.origin, req.referer);
    const current = await this.sessions.current(tenant, req.meta);
    const own = current ? await this.passkeys.listByUser(this.tenants.db(tenant), current.user.id) : [];
    const options = await generateAuthenticationOptions({
      // Undefined: the browser takes the page's own host (see relyingPartyOfOptionsRequest).
      rpID: rp?.rpID as string,
      userVerification: 'preferred',
      ...(own.length ? { allowCredentials: own.map(descriptorOf) } : {}),
    });
    const cookie = await this.pending(tenant, {
      type: 'authentication',
      expectedChallenge: options.challenge,
      userId: current?.user.id ?? '',
      origin: rp?.origin ?? null,
    });
    return { body: options, cookies: [cookie], headers: { 'Cache-Control': 'no-store' } };
  }

  /** `POST /passkey/verify-authentication` (the client's `signIn.passkey`): a new session through SessionsService.start. */
  async verifyAuthentication(tenant: Tenant, req: PasskeyRequest, input: VerifyAuthenticationInput): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const rp = relyingPartyOfVerification(tenant, req.origin);
    const ceremony = await this.takeCeremony(tenant, req.meta, 'authentication', rp.origin);
    const credentialId = input.response['id'];
    const db = this.tenants.db(tenant);
    // Only this application's database is searched: another application's credential is unknown here.
    const passkey = typeof credentialId === 'string' && credentialId ? await this.passkeys.findByCredentialId(db, credentialId) : null;
    if (!passkey) throw PasskeyErrors.passkeyNotFound();

    let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verification = await verifyAuthenticationResponse({
        response: input.response as unknown as AuthenticationResponseJSON,
        expectedChallenge: ceremony.expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64')),
          counter: passkey.counter,
          ...transportsOf(passkey),
        },
        requireUserVerification: false,
      });
    } catch (error) {
      // A wrong signature, another origin or RP ID, a counter that did not grow (a cloned authenticator).
      this.logger.warn(`${tenant.slug}: passkey sign-in refused: ${(error as Error).message}`);
      throw PasskeyErrors.authenticationFailed();
    }
    if (!verification.verified) throw PasskeyErrors.authenticationFailed(401);
    if (!(await this.passkeys.advanceCounter(db, passkey.id, passkey.counter, verification.authenticationInfo.newCounter)))
      throw PasskeyErrors.authenticationFailed(401);

    const user = await this.users.findById(db, passkey.user_id);
    if (!user) throw PasskeyErrors.userNotFound();
    const started = await this.startSession(tenant, user, req.meta);
    return { body: started.body, cookies: [clearedChallengeCookie(tenant), started.cookie] };
  }

  /** `GET /passkey/list-user-passkeys` */
  async list(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const { user } = await this.sessions.require(tenant, meta);
    return { body: (await this.passkeys.listByUser(this.tenants.db(tenant), user.id)).map(passkeyView) };
  }

  /** `POST /passkey/delete-passkey`: better-auth's requireResourceOwnership (404 unknown, 401 someone else's). */
  async delete(tenant: Tenant, meta: RequestMeta, id: string): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const { user } = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    await this.owned(db, id, user.id, AuthErrors.unauthorized);
    if (!(await this.passkeys.delete(db, id, user.id))) throw PasskeyErrors.passkeyNotFound(404);
    return { body: { status: true } };
  }

  /** `POST /passkey/update-passkey` */
  async rename(tenant: Tenant, meta: RequestMeta, id: string, name: string): Promise<AuthResult> {
    requirePlugin(tenant, 'passkey');
    const { user } = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    await this.owned(db, id, user.id, PasskeyErrors.notAllowedToRegister);
    const row = await this.passkeys.rename(db, id, user.id, name);
    if (!row) throw PasskeyErrors.passkeyNotFound(404);
    return { body: { passkey: passkeyView(row) } };
  }

  private async owned(db: TenantDb, id: string, userId: string, forbidden: () => Error): Promise<PasskeyRow> {
    const row = await this.passkeys.findById(db, id);
    if (!row) throw PasskeyErrors.passkeyNotFound(404);
    if (row.user_id !== userId) throw forbidden();
    return row;
  }

  /** better-auth's freshSessionMiddleware: 401 without a session, 403 SESSION_NOT_FRESH when signed in more than a day ago. */
  private async freshSession(tenant: Tenant, meta: RequestMeta): Promise<CurrentSession> {
    const current = await this.sessions.require(tenant, meta);
    if (Date.now() - current.session.created_at.getTime() >= FRESH_AGE_MS) throw PasskeyErrors.sessionNotFresh();
    return current;
  }

  /** Stores the ceremony (single use, CHALLENGE_TTL_SECONDS) and returns the cookie naming it. */
  private async pending(tenant: Tenant, ceremony: PendingCeremony): Promise<string> {
    const token = randomAlphanumeric(32);
    await this.verifications.create(this.tenants.db(tenant), PURPOSE, token, JSON.stringify(ceremony), CHALLENGE_TTL_SECONDS);
    return challengeCookie(tenant, token);
  }

  /**
   * Takes (deletes) the ceremony named by the request's challenge cookie: absent, forged, another
   * tenant's, expired, already used, of the other kind or made for another page → 400 CHALLENGE_NOT_FOUND.
   */
  private async takeCeremony(tenant: Tenant, meta: RequestMeta, type: PendingCeremony['type'], origin: string): Promise<PendingCeremony> {
    const token = challengeTokenFrom(tenant, meta.cookieHeader);
    const value = token ? await this.verifications.consume(this.tenants.db(tenant), PURPOSE, token) : null;
    if (!value) throw PasskeyErrors.challengeNotFound();
    const ceremony = JSON.parse(value) as PendingCeremony;
    if (ceremony.type !== type || (ceremony.origin !== null && ceremony.origin !== origin)) throw PasskeyErrors.challengeNotFound();
    return ceremony;
  }

  /** A session as sign-in makes it, and Better Auth's `{session, user}` body. */
  private async startSession(
    tenant: Tenant,
    user: UserRow,
    meta: RequestMeta,
  ): Promise<{ cookie: string; body: { session: ReturnType<typeof sessionView>; user: ReturnType<typeof userView> } }> {
    const started = await this.sessions.start(tenant, user, meta);
    const current = await this.sessions.current(tenant, { ...meta, cookieHeader: `${SESSION_COOKIE}=${signedValue(tenant, started.token)}` });
    if (!current) throw new Error('a session just started was not found');
    return { cookie: started.cookie, body: { session: sessionView(current.session, started.token), user: userView(current.user) } };
  }
}

function transportsOf(passkey: PasskeyRow): { transports?: AuthenticatorTransportFuture[] } {
  return passkey.transports ? { transports: passkey.transports.split(',') as AuthenticatorTransportFuture[] } : {};
}

function descriptorOf(passkey: PasskeyRow): { id: string; transports?: AuthenticatorTransportFuture[] } {
  return { id: passkey.credential_id, ...transportsOf(passkey) };
}
