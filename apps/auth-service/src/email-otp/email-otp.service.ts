import { createHmac, randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { digestsEqual } from '@slipway/crypto';
import { AuthError, type AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import { MailboxOwnerService } from '../magic-link/index.js';
import { PasswordHasher, PasswordService } from '../password/index.js';
import { SignInAttempts, type RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView } from '../users/index.js';
import type { OtpType, SignInOtpInput } from './dto/email-otp.dto.js';
import { EmailOtpRepository, type CodeCheck } from './email-otp.repository.js';

/** Better Auth's defaults: 6 digits, 5 minutes, 3 attempts per code. */
const OTP_LENGTH = 6;
const TTL_SECONDS = 300;
const ALLOWED_ATTEMPTS = 3;

/** Better Auth's identifier for a code: `<type>-otp-<email>`. */
const identifier = (type: OtpType, email: string) => `${type}-otp-${email}`;

/**
 * What is stored of a code: HMAC-SHA256 under the application's cookie secret, bound to its
 * identifier. A plain hash of a 6-digit code is reversed by trying the million codes, so a copy of
 * the database would give away every live code; keyed, it gives away nothing without the secret.
 */
const codeDigest = (tenant: Tenant, id: string, code: string) => createHmac('sha256', tenant.cookieSecret).update(`email-otp\n${id}\n${code}`).digest('hex');

const SUBJECTS: Record<OtpType, string> = {
  'sign-in': 'Your sign-in code',
  'email-verification': 'Your email verification code',
  'forget-password': 'Your password reset code',
};

/** Better Auth's email-OTP errors (EMAIL_OTP_ERROR_CODES) and USER_NOT_FOUND. */
const OtpErrors = {
  invalid: () => new AuthError(400, 'INVALID_OTP', 'Invalid OTP'),
  expired: () => new AuthError(400, 'OTP_EXPIRED', 'OTP expired'),
  tooManyAttempts: () => new AuthError(403, 'TOO_MANY_ATTEMPTS', 'Too many attempts'),
  userNotFound: () => new AuthError(400, 'USER_NOT_FOUND', 'User not found'),
};

@Injectable()
export class EmailOtpService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly repository: EmailOtpRepository,
    private readonly mailer: MailerService,
    private readonly attempts: SignInAttempts,
    private readonly owners: MailboxOwnerService,
    private readonly sessions: SessionsService,
    private readonly hasher: PasswordHasher,
    private readonly passwords: PasswordService,
  ) {}

  /**
   * `{success: true}` whatever the address: a sign-in code goes to anyone (it signs a new user up,
   * as Better Auth's), a verification or reset code only to an existing account.
   */
  async send(tenant: Tenant, email: string, type: OtpType): Promise<AuthResult> {
    const db = this.tenants.db(tenant);
    const user = await this.users.findByEmail(db, email);
    if (user || type === 'sign-in') {
      const code = String(randomInt(0, 10 ** OTP_LENGTH)).padStart(OTP_LENGTH, '0');
      await this.repository.issue(db, identifier(type, email), codeDigest(tenant, identifier(type, email), code), TTL_SECONDS);
      await this.mailer.send(tenant, {
        kind: 'email_otp',
        to: user?.email ?? email,
        subject: SUBJECTS[type],
        text: `Your code is ${code}\n\nIt works once, for 5 minutes. If you did not ask for it, ignore this email.`,
      });
    }
    return { body: { success: true } };
  }

  async signIn(tenant: Tenant, input: SignInOtpInput, meta: RequestMeta): Promise<AuthResult> {
    await this.checkCode(tenant, 'sign-in', input.email, input.otp, meta);
    const { user, session } = await this.owners.signIn(tenant, input.email, { name: input.name, image: input.image }, meta);
    return { body: { token: session.token, user: userView(user) }, cookies: [session.cookie] };
  }

  async verifyEmail(tenant: Tenant, email: string, otp: string, meta: RequestMeta): Promise<AuthResult> {
    await this.checkCode(tenant, 'email-verification', email, otp, meta);
    const user = await this.users.markEmailVerified(this.tenants.db(tenant), email);
    if (!user) throw OtpErrors.userNotFound();
    await this.sessions.invalidateUsers(tenant, [user.id]);
    return { body: { status: true, token: null, user: userView(user) } };
  }

  /** As the emailed reset link does (PasswordService.resetProven): all sessions revoked, reset links deleted, the sign-in lock lifted. */
  async resetPassword(tenant: Tenant, email: string, otp: string, password: string, meta: RequestMeta): Promise<AuthResult> {
    this.hasher.assertAcceptable(password);
    await this.checkCode(tenant, 'forget-password', email, otp, meta);
    const db = this.tenants.db(tenant);
    const user = await this.users.findByEmail(db, email);
    if (!user) throw OtpErrors.userNotFound();
    if (!user.email_verified) await this.users.markEmailVerified(db, email);
    await this.passwords.resetProven(tenant, user.id, password);
    return { body: { success: true } };
  }

  /** Checks a code without using it up (Better Auth's check-verification-otp); a wrong guess counts. */
  async check(tenant: Tenant, email: string, type: OtpType, otp: string, meta: RequestMeta): Promise<AuthResult> {
    await this.checkCode(tenant, type, email, otp, meta, true);
    if (!(await this.users.findByEmail(this.tenants.db(tenant), email))) throw OtpErrors.userNotFound();
    return { body: { success: true } };
  }

  /**
   * One guess at a code, limited twice: per code (3 attempts, then it is dead) and through the
   * sign-in limits for emailed codes (per account and per address, doubling locks; 429 before
   * the code is looked at). An unknown email is counted like a known one.
   */
  private async checkCode(tenant: Tenant, type: OtpType, email: string, otp: string, meta: RequestMeta, keep = false): Promise<void> {
    const attempt = await this.attempts.begin(tenant.applicationId, email, meta.ip, 'email-code');
    const guess = codeDigest(tenant, identifier(type, email), otp);
    let outcome: CodeCheck;
    try {
      outcome = await this.repository.check(this.tenants.db(tenant), identifier(type, email), (stored) => digestsEqual(stored, guess), ALLOWED_ATTEMPTS, keep);
    } catch (error) {
      await this.attempts.cancelled(attempt);
      throw error;
    }
    if (outcome === 'ok') {
      await this.attempts.succeeded(attempt);
      return;
    }
    await this.attempts.failed(attempt);
    if (outcome === 'expired') throw OtpErrors.expired();
    if (outcome === 'exhausted') throw OtpErrors.tooManyAttempts();
    throw OtpErrors.invalid();
  }
}
