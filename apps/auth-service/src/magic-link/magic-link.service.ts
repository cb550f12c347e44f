import { Injectable } from '@nestjs/common';
import { randomAlphanumeric } from '@slipway/crypto';
import { withQuery, type AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, sessionView } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import { userView } from '../users/index.js';
import { VerificationsRepository } from '../verifications/index.js';
import type { MagicLinkRequest, MagicLinkVerify } from './dto/magic-link.dto.js';
import { MailboxOwnerService } from './mailbox-owner.service.js';

/** `service_auth.verifications` identifier prefix: `magic-link:<sha256(token)>`, as Better Auth's `magic-link:<stored token>`. */
const PURPOSE = 'magic-link';
/** Better Auth's default `expiresIn`: five minutes. */
const TTL_SECONDS = 300;

interface MagicLinkRecord {
  type: 'magic-link';
  email: string;
  name?: string;
}

@Injectable()
export class MagicLinkService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly verifications: VerificationsRepository,
    private readonly mailer: MailerService,
    private readonly owners: MailboxOwnerService,
    private readonly sessions: SessionsService,
  ) {}

  /**
   * Emails a sign-in link whether or not the address has an account (the link signs a new user
   * up, as Better Auth's), so the answer tells nothing. The token is stored as its SHA-256 only.
   */
  async send(tenant: Tenant, input: MagicLinkRequest): Promise<AuthResult> {
    const email = input.email.toLowerCase();
    const token = randomAlphanumeric(32);
    const record: MagicLinkRecord = { type: 'magic-link', email, ...(input.name ? { name: input.name } : {}) };
    await this.verifications.create(this.tenants.db(tenant), PURPOSE, token, JSON.stringify(record), TTL_SECONDS);
    const link = new URL(`${tenant.authUrl}/magic-link/verify`);
    link.searchParams.set('token', token);
    link.searchParams.set('callbackURL', input.callbackURL ?? '/');
    if (input.newUserCallbackURL) link.searchParams.set('newUserCallbackURL', input.newUserCallbackURL);
    if (input.errorCallbackURL) link.searchParams.set('errorCallbackURL', input.errorCallbackURL);
    await this.mailer.send(tenant, {
      kind: 'magic_link',
      to: email,
      subject: 'Your sign-in link',
      text: `Open this link to sign in:\n\n${link}\n\nIt works once, for 5 minutes. If you did not ask for it, ignore this email.`,
    });
    return { body: { status: true } };
  }

  /**
   * The emailed link: takes the token (once; an expired one is deleted and refused), signs the
   * owner of the address in, and sends them to `callbackURL` (`newUserCallbackURL` for a new
   * user); without `callbackURL`, answers `{token, user, session}` as Better Auth. A token that is
   * unknown, used or expired: `errorCallbackURL` (else `callbackURL`, else `/`) with `?error=INVALID_TOKEN`.
   */
  async verify(tenant: Tenant, query: MagicLinkVerify, meta: RequestMeta): Promise<AuthResult> {
    const errorTarget = query.errorCallbackURL ?? query.callbackURL ?? '/';
    const value = await this.verifications.consume(this.tenants.db(tenant), PURPOSE, query.token);
    const record = value ? parseRecord(value) : null;
    if (!record) return { redirect: withQuery(errorTarget, 'error', 'INVALID_TOKEN') };
    const { user, isNewUser, session } = await this.owners.signIn(tenant, record.email, { name: record.name }, meta);
    if (!query.callbackURL) {
      const started = await this.sessions.current(tenant, { ...meta, cookieHeader: session.cookie.split(';')[0] });
      const body = { token: session.token, user: userView(started?.user ?? user), session: started ? sessionView(started.session, session.token) : null };
      return { body, cookies: [session.cookie] };
    }
    return { redirect: isNewUser && query.newUserCallbackURL ? query.newUserCallbackURL : query.callbackURL, cookies: [session.cookie] };
  }
}

function parseRecord(value: string): MagicLinkRecord | null {
  try {
    const record = JSON.parse(value) as Partial<MagicLinkRecord>;
    return record.type === 'magic-link' && typeof record.email === 'string' ? (record as MagicLinkRecord) : null;
  } catch {
    return null;
  }
}
