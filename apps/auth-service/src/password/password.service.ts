import { Injectable } from '@nestjs/common';
import { randomAlphanumeric } from '@slipway/crypto';
import { AuthErrors, newId, withQuery, type AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import { SignInAttempts, type RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import { PasswordHasher } from './password-hasher.js';

const PURPOSE = 'reset-password';
const TTL_SECONDS = 3600;
const RESET_REQUESTED = { status: true, message: 'If this email exists in our system, check your email for the reset link' };

@Injectable()
export class PasswordService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly verifications: VerificationsRepository,
    private readonly mailer: MailerService,
    private readonly attempts: SignInAttempts,
  ) {}

  /** Same answer whether or not the email has an account. */
  async requestReset(tenant: Tenant, email: string, redirectTo?: string): Promise<AuthResult> {
    const db = this.tenants.db(tenant);
    const user = await this.users.findByEmail(db, email);
    if (user) {
      const token = randomAlphanumeric(24);
      await this.verifications.create(db, PURPOSE, token, user.id, TTL_SECONDS);
      const link = new URL(`${tenant.authUrl}/reset-password/${token}`);
      if (redirectTo) link.searchParams.set('callbackURL', redirectTo);
      await this.mailer.send(tenant, {
        kind: 'password_reset',
        to: user.email,
        subject: 'Reset your password',
        text: `Open this link to choose a new password:\n\n${link}\n\nIt works once, for one hour. If you did not ask for it, ignore this email.`,
      });
    }
    return { body: RESET_REQUESTED };
  }

  /** The emailed link: back to the application's page with the token, or with `error=INVALID_TOKEN`. */
  async resetLink(tenant: Tenant, token: string, callbackURL: string | undefined): Promise<AuthResult> {
    if (!callbackURL) throw AuthErrors.invalidToken();
    const valid = await this.verifications.peek(this.tenants.db(tenant), PURPOSE, token);
    return { redirect: valid ? withQuery(callbackURL, 'token', token) : withQuery(callbackURL, 'error', 'INVALID_TOKEN') };
  }

  /**
   * Sets the new password and signs the user out everywhere (always, stronger than Better Auth's
   * opt-in `revokeSessionsOnPasswordReset`: a reset is how a user takes an account back).
   */
  async reset(tenant: Tenant, token: string, newPassword: string): Promise<AuthResult> {
    this.hasher.assertAcceptable(newPassword);
    const db = this.tenants.db(tenant);
    const userId = await this.verifications.consume(db, PURPOSE, token);
    if (!userId) throw AuthErrors.invalidToken();
    await this.resetProven(tenant, userId, newPassword);
    return { body: { status: true } };
  }

  /**
   * A reset once the user proved control of the mailbox (the emailed link, or an emailed code of
   * the email-OTP plugin): the new password, every outstanding reset link and the sign-in lock
   * gone, every session revoked through the session cache's invalidation.
   */
  async resetProven(tenant: Tenant, userId: string, newPassword: string): Promise<void> {
    this.hasher.assertAcceptable(newPassword);
    await this.users.setPassword(this.tenants.db(tenant), userId, newId(), await this.hasher.hash(newPassword));
    await this.afterPasswordSet(tenant, userId);
    await this.sessions.revokeAllOfUser(tenant, userId);
  }

  /** Other sessions are always revoked: whoever else held one may be why the password changes. */
  async change(tenant: Tenant, meta: RequestMeta, currentPassword: string, newPassword: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    this.hasher.assertAcceptable(newPassword);
    const db = this.tenants.db(tenant);
    const hash = await this.users.passwordHashOf(db, current.user.id);
    if (!(await this.hasher.verify(currentPassword, hash))) throw AuthErrors.invalidPassword();
    await this.users.setPassword(db, current.user.id, newId(), await this.hasher.hash(newPassword));
    await this.afterPasswordSet(tenant, current.user.id, current.user.email);
    await this.sessions.revokeAllOfUser(tenant, current.user.id, current.session.id);
    return { body: { token: null, user: userView(current.user) } };
  }

  /**
   * A new password ends what was issued for the old one: every outstanding reset link of the user
   * (an older email, or one an attacker requested, must not set the password again), and the sign-in
   * lock a stranger may be holding on the account (the user proved control another way).
   */
  private async afterPasswordSet(tenant: Tenant, userId: string, email?: string): Promise<void> {
    const db = this.tenants.db(tenant);
    await this.verifications.deleteAllFor(db, PURPOSE, userId);
    const address = email ?? (await this.users.findById(db, userId))?.email;
    if (!address) return;
    // A password-reset code of the email-OTP plugin (`forget-password-otp-<email>`) goes as the links do.
    await this.verifications.deleteIdentifier(db, `forget-password-otp-${address.toLowerCase()}`);
    await this.attempts.clearAccount(tenant.applicationId, address);
  }
}
