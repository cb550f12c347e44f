import { Injectable } from '@nestjs/common';
import { newId } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { UsersRepository, type UserRow } from '../users/index.js';
import { MailboxOwnerRepository } from './mailbox-owner.repository.js';

export interface MailboxSignIn {
  user: UserRow;
  isNewUser: boolean;
  session: { token: string; cookie: string };
}

/**
 * A sign-in by proof of the mailbox (a magic link opened, an emailed code typed), shared by the
 * magic-link and email-OTP plugins: the user is created when new (email verified, no password),
 * an unverified one loses what predates the proof (Better Auth's `revokeUnprovenAccountAccess`),
 * and a session starts.
 */
@Injectable()
export class MailboxOwnerService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly users: UsersRepository,
    private readonly repository: MailboxOwnerRepository,
    private readonly sessions: SessionsService,
  ) {}

  async signIn(tenant: Tenant, email: string, profile: { name?: string | undefined; image?: string | undefined }, meta: RequestMeta): Promise<MailboxSignIn> {
    const db = this.tenants.db(tenant);
    let user = await this.users.findByEmail(db, email);
    let isNewUser = false;
    if (!user) {
      user = await this.repository.createVerified(db, { id: newId(), email: email.toLowerCase(), name: profile.name ?? '', image: profile.image ?? null });
      isNewUser = user !== null;
      user ??= await this.users.findByEmail(db, email);
      if (!user) throw new Error('the user signing in by email proof vanished');
    }
    if (!user.email_verified) {
      const promoted = await this.repository.promoteUnproven(db, user.id);
      await this.sessions.invalidateUsers(tenant, [user.id]);
      user = promoted ?? (await this.users.findById(db, user.id)) ?? user;
    }
    const session = await this.sessions.start(tenant, user, meta);
    return { user, isNewUser, session };
  }
}
