import { Injectable } from '@nestjs/common';
import { randomAlphanumeric } from '@slipway/crypto';
import { AuthErrors, withQuery, type AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, type UserRow } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';

const PURPOSE = 'email-verification';
const TTL_SECONDS = 3600;

@Injectable()
export class EmailVerificationService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly verifications: VerificationsRepository,
    private readonly mailer: MailerService,
    private readonly sessions: SessionsService,
  ) {}

  async sendFor(tenant: Tenant, user: UserRow, callbackURL?: string): Promise<void> {
    const token = randomAlphanumeric(32);
    await this.verifications.create(this.tenants.db(tenant), PURPOSE, token, user.email.toLowerCase(), TTL_SECONDS);
    const link = new URL(`${tenant.authUrl}/verify-email`);
    link.searchParams.set('token', token);
    if (callbackURL) link.searchParams.set('callbackURL', callbackURL);
    await this.mailer.send(tenant, {
      kind: 'email_verification',
      to: user.email,
      subject: 'Verify your email address',
      text: `Open this link to verify your email address:\n\n${link}\n\nIt works for one hour.`,
    });
  }

  /** Always `{status:true}`: the answer says nothing about whether the address has an account. */
  async request(tenant: Tenant, email: string, callbackURL?: string): Promise<AuthResult> {
    const user = await this.users.findByEmail(this.tenants.db(tenant), email);
    if (user && !user.email_verified) await this.sendFor(tenant, user, callbackURL);
    return { body: { status: true } };
  }

  async verify(tenant: Tenant, token: string, callbackURL?: string): Promise<AuthResult> {
    const db = this.tenants.db(tenant);
    const email = token ? await this.verifications.consume(db, PURPOSE, token) : null;
    const user = email ? await this.users.markEmailVerified(db, email) : null;
    if (user) await this.sessions.invalidateUsers(tenant, [user.id]);
    if (!user) {
      if (callbackURL) return { redirect: withQuery(callbackURL, 'error', 'INVALID_TOKEN') };
      throw AuthErrors.invalidToken(401);
    }
    if (callbackURL) return { redirect: callbackURL };
    return { body: { status: true, user: null } };
  }
}
