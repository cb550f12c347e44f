import { Injectable } from '@nestjs/common';
import { AuthErrors, newId, type AuthResult } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, type CurrentSession } from '../sessions/index.js';
import { TenantsService, type Tenant, type TenantDb } from '../tenants/index.js';
import { CREATOR_ROLE, hasPermission, hasRole } from './access-control.js';
import type { CreateOrganizationInput, HasPermissionInput, SetActiveInput, UpdateOrganizationInput } from './dto/organization.dto.js';
import { orgError, plainError } from './organization-errors.js';
import { OrganizationRepository, type OrganizationRow } from './organization.repository.js';
import { invitationView, memberView, memberWithUserView, organizationView } from './organization.views.js';

/** Better Auth's default `membershipLimit`: also how many members get-full-organization lists. */
export const MEMBERSHIP_LIMIT = 100;

/** Organizations: create, update, delete, list, get-full-organization, set-active, check-slug, has-permission. */
@Injectable()
export class OrganizationService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly repository: OrganizationRepository,
  ) {}

  async create(tenant: Tenant, meta: RequestMeta, input: CreateOrganizationInput): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    if (tenant.settings.plugins?.organization?.allowUserToCreateOrganization === false) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION');
    const db = this.tenants.db(tenant);
    if (await this.repository.findOrganization(db, { slug: input.slug })) throw orgError(400, 'ORGANIZATION_ALREADY_EXISTS');
    const id = newId();
    const created = await this.repository.createWithCreator(
      db,
      { id, name: input.name, slug: input.slug, logo: input.logo ?? null, metadata: input.metadata ? JSON.stringify(input.metadata) : null },
      { id: newId(), organization_id: id, user_id: current.user.id, role: CREATOR_ROLE },
      input.keepCurrentActiveOrganization ? null : current.session.id,
    );
    // A parallel create took the slug between the check and the insert.
    if (!created) throw orgError(400, 'ORGANIZATION_ALREADY_EXISTS');
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: { ...organizationView(created.organization, true), members: [memberView(created.member)] } };
  }

  async update(tenant: Tenant, meta: RequestMeta, input: UpdateOrganizationInput): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const organizationId = input.organizationId || current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    if (!hasPermission(member.role, { organization: ['update'] })) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION');
    const { data } = input;
    if (typeof data.slug === 'string') {
      const existing = await this.repository.findOrganization(db, { slug: data.slug });
      if (existing && existing.id !== organizationId) throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN');
    }
    const changes = { name: data.name, slug: data.slug, logo: data.logo, metadata: data.metadata ? JSON.stringify(data.metadata) : undefined };
    const updated = await this.repository.updateOrganization(db, organizationId, changes).catch((error: { code?: string }) => {
      if (error.code === '23505') throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN');
      throw error;
    });
    return { body: updated ? organizationView(updated, true) : null };
  }

  async delete(tenant: Tenant, meta: RequestMeta, organizationId: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    if (!hasPermission(member.role, { organization: ['delete'] })) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
    const organization = await this.repository.findOrganization(db, { id: organizationId });
    if (!organization) throw plainError(400, 'Bad Request');
    // Members and invitations cascade; every session with it active loses it (foreign key, SET NULL).
    const members = await this.repository.deleteOrganization(db, organizationId);
    await this.sessions.invalidateUsers(tenant, [...new Set([current.user.id, ...members])]);
    return { body: organizationView(organization) };
  }

  async list(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const rows = await this.repository.listOrganizationsOf(this.tenants.db(tenant), current.user.id);
    return { body: rows.map((row) => organizationView(row)) };
  }

  async getFull(
    tenant: Tenant,
    meta: RequestMeta,
    query: { organizationId?: string | undefined; organizationSlug?: string | undefined; membersLimit?: number | undefined },
  ): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const key = query.organizationSlug || query.organizationId || current.session.active_organization_id;
    if (!key) return { body: null };
    const db = this.tenants.db(tenant);
    const organization = await this.repository.findOrganization(db, query.organizationSlug ? { slug: key } : { id: key });
    if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    const member = await this.repository.findMember(db, organization.id, current.user.id);
    if (!member) {
      await this.clearActive(tenant, db, current);
      throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    }
    const { members } = await this.repository.listMembers(db, organization.id, { limit: query.membersLimit || MEMBERSHIP_LIMIT, offset: 0 });
    // Invitation ids are links: only members who may invite see them, and the creator role's only by its holders.
    const invitations = hasPermission(member.role, { invitation: ['create'] })
      ? (await this.repository.listInvitations(db, organization.id)).filter((i) => hasRole(member.role, CREATOR_ROLE) || !hasRole(i.role, CREATOR_ROLE))
      : [];
    return { body: { ...organizationView(organization), invitations: invitations.map(invitationView), members: members.map(memberWithUserView) } };
  }

  async setActive(tenant: Tenant, meta: RequestMeta, input: SetActiveInput): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    let organizationId = input.organizationId;
    if (organizationId === null) {
      await this.clearActive(tenant, db, current);
      return { body: null };
    }
    if (!organizationId && !input.organizationSlug) {
      if (!current.session.active_organization_id) return { body: null };
      organizationId = current.session.active_organization_id;
    }
    let organization: OrganizationRow | null = null;
    if (input.organizationSlug && !organizationId) {
      organization = await this.repository.findOrganization(db, { slug: input.organizationSlug });
      if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
      organizationId = organization.id;
    }
    if (!organizationId) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    if (!(await this.repository.findMember(db, organizationId, current.user.id))) {
      await this.clearActive(tenant, db, current);
      throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    }
    organization ??= await this.repository.findOrganization(db, { id: organizationId });
    if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
    await this.repository.setActiveOrganization(db, current.session.id, organization.id);
    // Before answering: no replica serves this session (or its JWT) with the previous organization.
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: organizationView(organization) };
  }

  async checkSlug(tenant: Tenant, meta: RequestMeta, slug: string): Promise<AuthResult> {
    await this.sessions.require(tenant, meta);
    if (await this.repository.findOrganization(this.tenants.db(tenant), { slug })) throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN');
    return { body: { status: true } };
  }

  async hasPermission(tenant: Tenant, meta: RequestMeta, input: HasPermissionInput): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    // Better Auth's body is exactly one of `permissions` and the deprecated `permission` (which it then ignores).
    if ((input.permission === undefined) === (input.permissions === undefined)) throw AuthErrors.validation('[body] Invalid input');
    const organizationId = input.organizationId || current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION');
    const member = await this.repository.findMember(this.tenants.db(tenant), organizationId, current.user.id);
    if (!member) throw orgError(401, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    return { body: { error: null, success: hasPermission(member.role, input.permissions) } };
  }

  /** Better Auth clears the session's active organization when it names one the user is not a member of. */
  private async clearActive(tenant: Tenant, db: TenantDb, current: CurrentSession): Promise<void> {
    if (!current.session.active_organization_id) return;
    await this.repository.setActiveOrganization(db, current.session.id, null);
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
  }
}
