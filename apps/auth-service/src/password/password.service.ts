import { Injectable } from '@nestjs/common';
import { randomAlphanumeric } from '@slipway/crypto';
import { AuthErrors } from '../common/auth-error.js';
import type { AuthResult } from '../common/auth-result.js';
import type { RequestMeta } from '../common/auth-request.js';
import { newId } from '../common/ids.js';
import { MailerService } from '../common/mailer.service.js';
import { VerificationsRepository } from '../common/verifications.repository.js';
import { withQuery } from '../email-verification/email-verification.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { TenantsService } from '../tenants/tenants.service.js';
import type { Tenant } from '../tenants/tenant.js';
import { UsersRepository, userView } from '../users/users.repository.js';
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
      await this.mailer.send(tenant, { kind: 'password_reset', to: user.email, subject: 'Reset your password', text: `Open this link to choose a new password:\n\n${link}\n\nIt works once, for one hour. If you did not ask for it, ignore this email.` });
    }
    return { body: RESET_REQUESTED };
  }

  /** The emailed link: back to the application's page with the token, or with `error=INVALID_TOKEN`. */
  async resetLink(tenant: Tenant, token: string, callbackURL: string | undefined): Promise<AuthResult> {
    if (!callbackURL) throw AuthErrors.invalidToken();
    const valid = await this.verifications.peek(this.tenants.db(tenant), PURPOSE, token);
    return { redirect: valid ? withQuery(callbackURL, 'token', token) : withQuery(callbackURL, 'error', 'INVALID_TOKEN') };
  }

  /** Sets the new password and signs the user out everywhere. */
  async reset(tenant: Tenant, token: string, newPassword: string): Promise<AuthResult> {
    this.hasher.assertAcceptable(newPassword);
    const db = this.tenants.db(tenant);
    const userId = await this.verifications.consume(db, PURPOSE, token);
    if (!userId) throw AuthErrors.invalidToken();
    await this.users.setPassword(db, userId, newId(), await this.hasher.hash(newPassword));
    await this.sessions.revokeAllOfUser(tenant, userId);
    return { body: { status: true } };
  }

  /** Other sessions are always revoked: whoever else held one may be why the password changes. */
  async change(tenant: Tenant, meta: RequestMeta, currentPassword: string, newPassword: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    this.hasher.assertAcceptable(newPassword);
    const db = this.tenants.db(tenant);
    const hash = await this.users.passwordHashOf(db, current.user.id);
    if (!(await this.hasher.verify(currentPassword, hash))) throw AuthErrors.invalidPassword();
    await this.users.setPassword(db, current.user.id, newId(), await this.hasher.hash(newPassword));
    await this.sessions.revokeAllOfUser(tenant, current.user.id, current.session.id);
    return { body: { token: null, user: userView(current.user) } };
  }
}
