import { Injectable } from '@nestjs/common';
import { AuthError, AuthErrors, emailField, newId, type AuthResult } from '../common/index.js';
import { MailerService } from '../mail/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant } from '../tenants/index.js';
import type { UserRow } from '../users/index.js';
import { CREATOR_ROLE, KNOWN_ROLES, hasPermission, hasRole, parseRoleList, parseRoles } from './access-control.js';
import type { InviteInput } from './dto/organization.dto.js';
import { orgError, plainError, roleNotFound } from './organization-errors.js';
import { OrganizationRepository, type InvitationRow, type OrganizationRow } from './organization.repository.js';
import { MEMBERSHIP_LIMIT } from './organization.service.js';
import { invitationView, memberView } from './organization.views.js';

/** Better Auth's `invitationExpiresIn` default: 48 hours. */
export const INVITATION_EXPIRES_IN_MS = 48 * 3600 * 1000;
/** Better Auth's `invitationLimit` default: pending invitations per organization. */
const INVITATION_LIMIT = 100;

/**
 * Invitations: invite-member (and its email), accept, reject, cancel, get-invitation,
 * list-invitations, list-user-invitations. An invitation is accepted only by the signed-in user
 * whose email it was sent to; its id (32 random characters) is what the email carries.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly repository: OrganizationRepository,
    private readonly mailer: MailerService,
  ) {}

  async invite(tenant: Tenant, meta: RequestMeta, input: InviteInput, pageOrigin: string | undefined): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const organizationId = input.organizationId || current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const email = input.email.toLowerCase();
    if (!emailField.safeParse(email).success || email.trim() !== email) throw AuthErrors.invalidEmail();
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    if (!hasPermission(member.role, { invitation: ['create'] })) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION');
    const roles = parseRoleList(input.role);
    if (roles.length === 0) throw orgError(400, 'ROLE_NOT_FOUND');
    const unknown = roles.filter((role) => !KNOWN_ROLES.has(role));
    if (unknown.length > 0) throw roleNotFound(unknown);
    const inviterIsCreator = hasRole(member.role, CREATOR_ROLE);
    if (!inviterIsCreator && roles.includes(CREATOR_ROLE)) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
    if (await this.repository.findMemberByEmail(db, organizationId, email)) throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
    const pending = await this.repository.pendingInvitations(db, organizationId, email);
    if (pending.length > 0 && !input.resend) throw orgError(400, 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION');
    const organization = await this.repository.findOrganization(db, { id: organizationId });
    if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const existing = pending[0];
    if (existing && input.resend) {
      if (!inviterIsCreator && hasRole(existing.role, CREATOR_ROLE)) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE');
      const renewed = (await this.repository.renewInvitation(db, existing.id, new Date(Date.now() + INVITATION_EXPIRES_IN_MS))) ?? existing;
      await this.sendEmail(tenant, renewed, organization, current.user, pageOrigin);
      return { body: invitationView(renewed) };
    }
    if ((await this.repository.pendingInvitations(db, organizationId)).length >= INVITATION_LIMIT) throw orgError(403, 'INVITATION_LIMIT_REACHED');
    const invitation = await this.repository.createInvitation(db, {
      id: newId(),
      organization_id: organizationId,
      email,
      role: parseRoles(roles),
      expires_at: new Date(Date.now() + INVITATION_EXPIRES_IN_MS),
      inviter_id: current.user.id,
    });
    await this.sendEmail(tenant, invitation, organization, current.user, pageOrigin);
    return { body: invitationView(invitation) };
  }

  async accept(tenant: Tenant, meta: RequestMeta, invitationId: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    // Ids are per application database: another application's invitation id is simply unknown here.
    const invitation = await this.repository.findInvitation(db, invitationId);
    if (!invitation || invitation.expires_at.getTime() < Date.now() || invitation.status !== 'pending') throw orgError(400, 'INVITATION_NOT_FOUND');
    if (invitation.email.toLowerCase() !== current.user.email.toLowerCase()) throw orgError(403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    if ((await this.repository.countMembers(db, invitation.organization_id)) >= MEMBERSHIP_LIMIT) throw orgError(403, 'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED');
    if (!(await this.repository.findOrganization(db, { id: invitation.organization_id }))) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    // Better Auth would add a second membership; one per (organization, user) here.
    if (await this.repository.findMember(db, invitation.organization_id, current.user.id)) throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION');
    const accepted = await this.repository.accept(db, invitation.id, { id: newId(), userId: current.user.id }, current.session.id);
    if (!accepted) throw orgError(400, 'INVITATION_NOT_FOUND');
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: { invitation: invitationView(accepted.invitation), member: memberView(accepted.member) } };
  }

  async reject(tenant: Tenant, meta: RequestMeta, invitationId: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const invitation = await this.repository.findInvitation(db, invitationId);
    if (!invitation || invitation.status !== 'pending') throw new AuthError(400, 'INVITATION_NOT_FOUND', 'Invitation not found!');
    if (invitation.email.toLowerCase() !== current.user.email.toLowerCase()) throw orgError(403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    if (!(await this.repository.findOrganization(db, { id: invitation.organization_id }))) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const rejected = await this.repository.setInvitationStatus(db, invitation.id, 'rejected');
    return { body: { invitation: rejected ? invitationView(rejected) : null, member: null } };
  }

  async cancel(tenant: Tenant, meta: RequestMeta, invitationId: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const invitation = await this.repository.findInvitation(db, invitationId);
    if (!invitation) throw orgError(400, 'INVITATION_NOT_FOUND');
    const member = await this.repository.findMember(db, invitation.organization_id, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    if (!hasPermission(member.role, { invitation: ['cancel'] })) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION');
    if (!(await this.repository.findOrganization(db, { id: invitation.organization_id }))) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const canceled = await this.repository.setInvitationStatus(db, invitation.id, 'canceled');
    return { body: canceled ? invitationView(canceled) : null };
  }

  async get(tenant: Tenant, meta: RequestMeta, invitationId: string): Promise<AuthResult> {
    const current = await this.sessions.current(tenant, meta);
    if (!current) throw plainError(401, 'Not authenticated');
    const db = this.tenants.db(tenant);
    const invitation = await this.repository.findInvitation(db, invitationId);
    if (!invitation || invitation.status !== 'pending' || invitation.expires_at.getTime() < Date.now()) throw orgError(400, 'INVITATION_NOT_FOUND');
    if (invitation.email.toLowerCase() !== current.user.email.toLowerCase()) throw orgError(403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION');
    const organization = await this.repository.findOrganization(db, { id: invitation.organization_id });
    if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const inviter = await this.repository.findMember(db, invitation.organization_id, invitation.inviter_id);
    if (!inviter) throw orgError(400, 'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION');
    return {
      body: { ...invitationView(invitation), organizationName: organization.name, organizationSlug: organization.slug, inviterEmail: inviter.user.email },
    };
  }

  async list(tenant: Tenant, meta: RequestMeta, organizationIdQuery: string | undefined): Promise<AuthResult> {
    const current = await this.sessions.current(tenant, meta);
    if (!current) throw plainError(401, 'Not authenticated');
    const organizationId = organizationIdQuery || current.session.active_organization_id;
    if (!organizationId) throw plainError(400, 'Organization ID is required');
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw plainError(403, 'You are not a member of this organization');
    // Invitation ids are links: only those who may invite see them; the creator role's only its holders.
    if (!hasPermission(member.role, { invitation: ['create'] })) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS');
    const rows = await this.repository.listInvitations(db, organizationId);
    const visible = hasRole(member.role, CREATOR_ROLE) ? rows : rows.filter((i) => !hasRole(i.role, CREATOR_ROLE));
    return { body: visible.map(invitationView) };
  }

  async listForUser(tenant: Tenant, meta: RequestMeta, emailQuery: string | undefined): Promise<AuthResult> {
    const current = await this.sessions.current(tenant, meta);
    // From a browser the email is always the session's (Better Auth allows the query only from its server-side API).
    if (emailQuery) throw plainError(400, 'User email cannot be passed for client side API calls.');
    if (!current) throw plainError(400, 'Missing session headers, or email query parameter.');
    if (!current.user.email_verified) throw orgError(403, 'EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION');
    const rows = await this.repository.listInvitationsTo(this.tenants.db(tenant), current.user.email.toLowerCase());
    return { body: rows.map((row) => ({ ...invitationView(row), organizationName: row.organization_name })) };
  }

  /**
   * Better Auth leaves the email to the application (`sendInvitationEmail`); the service sends
   * one: the invitation id, and a link to `/accept-invitation/{id}` on the page the inviter used
   * (the request's Origin, which the pipeline admitted as this application's), where the app calls
   * `organization.acceptInvitation({invitationId})`.
   */
  private async sendEmail(
    tenant: Tenant,
    invitation: InvitationRow,
    organization: OrganizationRow,
    inviter: UserRow,
    pageOrigin: string | undefined,
  ): Promise<void> {
    const origin = pageOrigin ? new URL(pageOrigin).origin : [...tenant.trustedOrigins][0];
    const link = origin ? `${origin}/accept-invitation/${invitation.id}` : null;
    const text = [
      `${inviter.name} (${inviter.email}) invited you to join ${organization.name} as ${invitation.role}.`,
      '',
      ...(link ? ['Open this link to accept the invitation (sign in or sign up with this email address first):', '', link, ''] : []),
      `Invitation id: ${invitation.id}`,
      '',
      'It works for 48 hours.',
    ].join('\n');
    await this.mailer.send(tenant, {
      kind: 'organization_invitation',
      to: invitation.email,
      subject: `You are invited to join ${organization.name.replace(/\p{Cc}+/gu, ' ')}`,
      text,
    });
  }
}
