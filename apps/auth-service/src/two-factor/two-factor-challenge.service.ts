import { Injectable } from '@nestjs/common';
import { randomAlphanumeric, sha256Hex } from '@slipway/crypto';
import type { AuthResult } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, type CurrentSession } from '../sessions/index.js';
import { TenantsService, pluginEnabled, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView, type UserRow } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import {
  CHALLENGE_COOKIE,
  CHALLENGE_MAX_AGE_SECONDS,
  TRUST_COOKIE,
  TRUST_MAX_AGE_SECONDS,
  clearedCookie,
  macsEqual,
  readSignedCookie,
  signedCookie,
  trustMac,
} from './two-factor-cookies.js';
import { TwoFactorErrors } from './two-factor.errors.js';
import { TwoFactorRepository } from './two-factor.repository.js';

/** `service_auth.verifications` purposes (identifier `purpose:sha256(token)`, so no raw token is stored). */
const CHALLENGE = 'two-factor-challenge';
const TRUST = 'two-factor-trust';

/** Who is proving a second factor: a signed-in user (enrolment, session checks) or a sign-in awaiting its second factor. */
export type Prover =
  { mode: 'session'; user: UserRow; current: CurrentSession; key: string } | { mode: 'challenge'; user: UserRow; challengeId: string; key: string };

/**
 * The second step of a password sign-in. A challenge is a random id in a signed, path-scoped
 * cookie (`challengeId!userId`) and a row in `verifications` (token `challengeId:userId`, value
 * `userId:rememberMe`, 10 minutes); it is used up by the first correct code. A trusted device is
 * a signed cookie (`HMAC(userId!trustId)!trustId`, 30 days) and a row whose token also holds a
 * digest of the user's password hash at the time: a new password (reset or change, by any route)
 * leaves no row that matches, so every trusted device is challenged again.
 */
@Injectable()
export class TwoFactorChallenges {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly verifications: VerificationsRepository,
    private readonly sessions: SessionsService,
    private readonly twoFactors: TwoFactorRepository,
  ) {}

  /**
   * After a correct password: nothing to do (two-factor off for the user or the application), a
   * trusted device (its cookie renewed, as Better Auth rotates it), or the challenge to answer
   * instead of a session (`{twoFactorRedirect, twoFactorMethods}`, no session cookie).
   */
  async gate(
    tenant: Tenant,
    user: UserRow,
    passwordHash: string,
    meta: RequestMeta,
    rememberMe: boolean,
  ): Promise<{ challenge: AuthResult } | { cookies: string[] }> {
    if (!pluginEnabled(tenant, 'twoFactor') || !user.two_factor_enabled) return { cookies: [] };
    const db = this.tenants.db(tenant);
    const trust = readSignedCookie(tenant, meta.cookieHeader, TRUST_COOKIE);
    if (trust !== null) {
      const [mac, trustId] = trust.split('!');
      if (mac && trustId && macsEqual(mac, trustMac(tenant, user.id, trustId))) {
        const owner = await this.verifications.consume(db, TRUST, trustToken(trustId, passwordHash));
        if (owner === user.id) return { cookies: [await this.trustDevice(tenant, user.id, passwordHash)] };
      }
    }
    const challengeId = randomAlphanumeric(32);
    await this.verifications.create(db, CHALLENGE, `${challengeId}:${user.id}`, `${user.id}:${rememberMe ? 1 : 0}`, CHALLENGE_MAX_AGE_SECONDS);
    const totp = (await this.twoFactors.findByUser(db, user.id))?.verified === true;
    const cookies = [signedCookie(tenant, CHALLENGE_COOKIE, `${challengeId}!${user.id}`, CHALLENGE_MAX_AGE_SECONDS)];
    if (meta.cookieHeader?.includes(`${TRUST_COOKIE}=`)) cookies.push(clearedCookie(tenant, TRUST_COOKIE));
    // Emailed codes are always available (the service sends them), as Better Auth with `sendOTP` set.
    return { challenge: { body: { twoFactorRedirect: true, twoFactorMethods: totp ? ['totp', 'otp'] : ['otp'] }, cookies } };
  }

  /** The session's user, else the pending sign-in of the challenge cookie (401 INVALID_TWO_FACTOR_COOKIE without either). */
  async prover(tenant: Tenant, meta: RequestMeta): Promise<Prover> {
    const current = await this.sessions.current(tenant, meta);
    if (current) return { mode: 'session', user: current.user, current, key: `session:${current.session.id}` };
    const value = readSignedCookie(tenant, meta.cookieHeader, CHALLENGE_COOKIE);
    const [challengeId, userId] = value?.split('!') ?? [];
    if (!challengeId || !userId) throw TwoFactorErrors.invalidCookie();
    const db = this.tenants.db(tenant);
    if (!(await this.verifications.peek(db, CHALLENGE, `${challengeId}:${userId}`))) throw TwoFactorErrors.invalidCookie();
    const user = await this.users.findById(db, userId);
    if (!user) throw TwoFactorErrors.invalidCookie();
    return { mode: 'challenge', user, challengeId, key: `challenge:${challengeId}` };
  }

  /**
   * A correct second factor. Signed in already: `{token, user}` of the current session. A sign-in:
   * the challenge is used up (a second request with it fails), the session starts, and with
   * `trustDevice` the device is remembered for 30 days.
   */
  async passed(tenant: Tenant, prover: Prover, meta: RequestMeta, trustDevice = false): Promise<AuthResult> {
    const db = this.tenants.db(tenant);
    const user = (await this.users.findById(db, prover.user.id)) ?? prover.user;
    if (prover.mode === 'session') return { body: { token: prover.current.token, user: userView(user) } };
    const value = await this.verifications.consume(db, CHALLENGE, `${prover.challengeId}:${user.id}`);
    if (!value?.startsWith(`${user.id}:`)) throw TwoFactorErrors.invalidCookie();
    const session = await this.sessions.start(tenant, user, meta, value.endsWith(':1'));
    const cookies = [session.cookie, clearedCookie(tenant, CHALLENGE_COOKIE)];
    const passwordHash = trustDevice ? await this.users.passwordHashOf(db, user.id) : null;
    if (passwordHash) cookies.push(await this.trustDevice(tenant, user.id, passwordHash));
    return { body: { token: session.token, user: userView(user) }, cookies };
  }

  /** Two-factor switched off: every trusted device of the user goes (Better Auth forgets only the current one). */
  async forgetDevices(tenant: Tenant, userId: string): Promise<string> {
    await this.verifications.deleteAllFor(this.tenants.db(tenant), TRUST, userId);
    return clearedCookie(tenant, TRUST_COOKIE);
  }

  private async trustDevice(tenant: Tenant, userId: string, passwordHash: string): Promise<string> {
    const trustId = randomAlphanumeric(32);
    await this.verifications.create(this.tenants.db(tenant), TRUST, trustToken(trustId, passwordHash), userId, TRUST_MAX_AGE_SECONDS);
    return signedCookie(tenant, TRUST_COOKIE, `${trustMac(tenant, userId, trustId)}!${trustId}`, TRUST_MAX_AGE_SECONDS);
  }
}

/** A trusted device's row is found only with the password hash it was issued under. */
function trustToken(trustId: string, passwordHash: string): string {
  return `${trustId}:${sha256Hex(passwordHash)}`;
}
