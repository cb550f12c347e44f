import { createHmac, randomInt } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import type { AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import { SignInAttempts, type RequestMeta } from '../pipeline/index.js';
import { KEYRING } from '../platform/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { userView } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import type { VerifyBackupCodeInput, VerifyCodeInput } from './dto/two-factor.dto.js';
import { TwoFactorChallenges, type Prover } from './two-factor-challenge.service.js';
import { TwoFactorErrors } from './two-factor.errors.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { matchingStep } from './totp.js';
import { backupCodeDigest } from './two-factor-cookies.js';

/**
 * Emailed codes: the code is in the hashed identifier (`two-factor-otp:sha256(otpToken)`), so only
 * a digest is stored; keyed (HMAC under the application's cookie secret), because the prover's key
 * may be a session id, stored as is, and six digits are a million guesses away from a plain hash.
 */
const OTP = 'two-factor-otp';
const otpToken = (tenant: Tenant, key: string, code: string) =>
  createHmac('sha256', tenant.cookieSecret).update(`two-factor-otp\n${key}\n${code}`).digest('hex');
/** That a code was sent for this key and has not expired: tells an expired code (400) from a wrong one (401). */
const OTP_SENT = 'two-factor-otp-sent';
/** Better Auth's OTP period: 3 minutes. */
const OTP_TTL_SECONDS = 180;

/**
 * Checking a second factor: an authenticator code (once per code), an emailed code (once), a
 * backup code (once). Every guess is an attempt of `SignInAttempts` (purpose `two-factor`, the user
 * id as the account): per account and per address, doubling locks; a wrong code counts.
 */
@Injectable()
export class TwoFactorCodes {
  constructor(
    @Inject(KEYRING) private readonly keyring: Keyring,
    private readonly tenants: TenantsService,
    private readonly verifications: VerificationsRepository,
    private readonly sessions: SessionsService,
    private readonly mailer: MailerService,
    private readonly attempts: SignInAttempts,
    private readonly twoFactors: TwoFactorRepository,
    private readonly challenges: TwoFactorChallenges,
  ) {}

  /** `POST /two-factor/verify-totp`: also completes an enrolment (the first code turns two-factor on). */
  async verifyTotp(tenant: Tenant, meta: RequestMeta, input: VerifyCodeInput): Promise<AuthResult> {
    const prover = await this.challenges.prover(tenant, meta);
    const db = this.tenants.db(tenant);
    const row = await this.twoFactors.findByUser(db, prover.user.id);
    if (!row || (prover.mode === 'challenge' && !row.verified)) throw TwoFactorErrors.totpNotEnabled();
    const ok = await this.guess(tenant, prover, meta, async () => {
      const secret = decryptEnvelopeToString(this.keyring, row.secret, envelopeBinding.twoFactorSecret(tenant.applicationId, prover.user.id));
      const step = await matchingStep(secret, input.code);
      // A code is accepted once: its time step must be later than the last one used.
      return step !== null && (await this.twoFactors.acceptTotpStep(db, row.id, step));
    });
    if (!ok) throw TwoFactorErrors.invalidCode();
    if (!row.verified) {
      await this.twoFactors.confirm(db, prover.user.id);
      await this.sessions.invalidateUsers(tenant, [prover.user.id]);
    }
    return this.challenges.passed(tenant, prover, meta, input.trustDevice);
  }

  /** `POST /two-factor/send-otp`: a new 6-digit code by email (earlier ones stop working). */
  async sendOtp(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const prover = await this.challenges.prover(tenant, meta);
    const db = this.tenants.db(tenant);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await this.verifications.deleteAllFor(db, OTP, prover.user.id);
    await this.verifications.deleteAllFor(db, OTP_SENT, prover.user.id);
    await this.verifications.create(db, OTP, otpToken(tenant, prover.key, code), prover.user.id, OTP_TTL_SECONDS);
    await this.verifications.create(db, OTP_SENT, prover.key, prover.user.id, OTP_TTL_SECONDS);
    await this.mailer.send(tenant, {
      kind: 'two_factor_otp',
      to: prover.user.email,
      subject: 'Your verification code',
      text: `Your verification code is ${code}\n\nIt works once, for 3 minutes. If you did not try to sign in, change your password.`,
    });
    return { body: { status: true } };
  }

  /** `POST /two-factor/verify-otp`: with a session and two-factor off, turns it on (Better Auth). */
  async verifyOtp(tenant: Tenant, meta: RequestMeta, input: VerifyCodeInput): Promise<AuthResult> {
    const prover = await this.challenges.prover(tenant, meta);
    const db = this.tenants.db(tenant);
    if (!(await this.verifications.peek(db, OTP_SENT, prover.key))) throw TwoFactorErrors.otpExpired();
    const ok = await this.guess(
      tenant,
      prover,
      meta,
      async () => (await this.verifications.consume(db, OTP, otpToken(tenant, prover.key, input.code))) === prover.user.id,
    );
    if (!ok) throw TwoFactorErrors.invalidCode();
    await this.verifications.deleteAllFor(db, OTP_SENT, prover.user.id);
    if (prover.mode === 'session' && !prover.user.two_factor_enabled) {
      await this.twoFactors.enableOtpOnly(db, prover.user.id);
      await this.sessions.invalidateUsers(tenant, [prover.user.id]);
    }
    return this.challenges.passed(tenant, prover, meta, input.trustDevice);
  }

  /** `POST /two-factor/verify-backup-code`: each code works once. */
  async verifyBackupCode(tenant: Tenant, meta: RequestMeta, input: VerifyBackupCodeInput): Promise<AuthResult> {
    const prover = await this.challenges.prover(tenant, meta);
    const db = this.tenants.db(tenant);
    if (!(await this.twoFactors.findByUser(db, prover.user.id))) throw TwoFactorErrors.backupCodesNotEnabled();
    const ok = await this.guess(tenant, prover, meta, () =>
      this.twoFactors.useBackupCode(db, prover.user.id, backupCodeDigest(tenant, prover.user.id, input.code)),
    );
    if (!ok) throw TwoFactorErrors.invalidBackupCode();
    // Better Auth: `disableSession` checks the code without starting a session.
    if (input.disableSession && prover.mode === 'challenge') return { body: { user: userView(prover.user) } };
    return this.challenges.passed(tenant, prover, meta, input.trustDevice);
  }

  /** One guess: reserved before checking (429 when locked), counted when wrong, given back when no verdict was reached. */
  private async guess(tenant: Tenant, prover: Prover, meta: RequestMeta, check: () => Promise<boolean>): Promise<boolean> {
    const attempt = await this.attempts.begin(tenant.applicationId, prover.user.id, meta.ip, 'two-factor');
    let ok: boolean;
    try {
      ok = await check();
    } catch (error) {
      await this.attempts.cancelled(attempt);
      throw error;
    }
    if (ok) await this.attempts.succeeded(attempt);
    else await this.attempts.failed(attempt);
    return ok;
  }
}
