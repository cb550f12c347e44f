import { Injectable } from '@nestjs/common';
import { AuthErrors, type AuthResult } from '../common/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService } from '../sessions/index.js';
import { TenantsService, type Tenant, type TenantDb } from '../tenants/index.js';
import { CREATOR_ROLE, KNOWN_ROLES, hasPermission, hasRole, parseRoleList, parseRoles } from './access-control.js';
import type { ListMembersInput } from './dto/organization.dto.js';
import { orgError, plainError, roleNotFound } from './organization-errors.js';
import { MEMBER_FIELDS, OrganizationRepository, type MemberListQuery } from './organization.repository.js';
import { memberView, memberWithUserView } from './organization.views.js';

/** An upper bound on one page of list-members (Better Auth has none; its default page is 100). */
const MAX_PAGE = 1000;

/** Members: remove-member, update-member-role, leave, list-members, get-active-member, get-active-member-role. */
@Injectable()
export class MembersService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly repository: OrganizationRepository,
  ) {}

  async remove(tenant: Tenant, meta: RequestMeta, input: { memberIdOrEmail: string; organizationId?: string | undefined }): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const organizationId = input.organizationId || current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION');
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    const target = input.memberIdOrEmail.includes('@')
      ? await this.repository.findMemberByEmail(db, organizationId, input.memberIdOrEmail)
      : await this.repository.findMemberById(db, input.memberIdOrEmail);
    // Checked first here (Better Auth checks it after the roles): another organization's member says nothing about its role.
    if (!target || target.organization_id !== organizationId) throw orgError(400, 'MEMBER_NOT_FOUND');
    if (hasRole(target.role, CREATOR_ROLE)) {
      if (!hasRole(member.role, CREATOR_ROLE)) throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
      if ((await this.owners(db, organizationId)) <= 1) throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    }
    if (!hasPermission(member.role, { member: ['delete'] })) throw orgError(401, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER');
    // Every session of the removed user loses this organization (Better Auth clears only the remover's own).
    await this.repository.deleteMember(db, target);
    await this.sessions.invalidateUsers(tenant, [target.user_id]);
    return { body: { member: memberView(target) } };
  }

  async updateRole(
    tenant: Tenant,
    meta: RequestMeta,
    input: { role: string | string[]; memberId: string; organizationId?: string | undefined },
  ): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const roleToSet = parseRoleList(input.role);
    if (roleToSet.length === 0) throw plainError(400, 'Bad Request');
    const organizationId = input.organizationId || current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION');
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    const target = member.id === input.memberId ? member : await this.repository.findMemberById(db, input.memberId);
    if (!target) throw orgError(400, 'MEMBER_NOT_FOUND');
    if (target.organization_id !== organizationId) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    const updaterIsCreator = hasRole(member.role, CREATOR_ROLE);
    const settingCreator = roleToSet.includes(CREATOR_ROLE);
    if ((hasRole(target.role, CREATOR_ROLE) || settingCreator) && !updaterIsCreator) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    if (updaterIsCreator && member.id === target.id && !settingCreator && (await this.owners(db, organizationId)) <= 1)
      throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER');
    if (!hasPermission(member.role, { member: ['update'] }, true)) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
    const unknown = roleToSet.filter((role) => !KNOWN_ROLES.has(role));
    if (unknown.length > 0) throw roleNotFound(unknown);
    const updated = await this.repository.updateMemberRole(db, target.id, parseRoles(roleToSet));
    if (!updated) throw orgError(400, 'MEMBER_NOT_FOUND');
    // The member's JWT carries the role: no replica hands out the old one after this answer.
    await this.sessions.invalidateUsers(tenant, [updated.user_id]);
    return { body: memberView(updated) };
  }

  async leave(tenant: Tenant, meta: RequestMeta, organizationId: string): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    if (hasRole(member.role, CREATOR_ROLE) && (await this.owners(db, organizationId)) <= 1)
      throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    await this.repository.deleteMember(db, member);
    await this.sessions.invalidateUsers(tenant, [current.user.id]);
    return { body: memberWithUserView(member) };
  }

  async list(tenant: Tenant, meta: RequestMeta, query: ListMembersInput): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const organizationId = await this.organizationOf(db, query, current.session.active_organization_id);
    if (!(await this.repository.findMember(db, organizationId, current.user.id))) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
    const list: MemberListQuery = { limit: Math.min(query.limit || 100, MAX_PAGE), offset: query.offset || 0 };
    if (query.sortBy) {
      list.sortBy = memberColumn(query.sortBy);
      list.sortDirection = query.sortDirection;
    }
    if (query.filterField) {
      const operator = query.filterOperator ?? 'eq';
      const many = operator === 'in' || operator === 'not_in';
      const value = many ? [query.filterValue ?? []].flat() : query.filterValue;
      if (typeof value !== 'string' && !many) throw AuthErrors.validation('[query.filterValue] Invalid input');
      list.filter = { column: memberColumn(query.filterField), operator, value };
    }
    const { members, total } = await this.repository.listMembers(db, organizationId, list);
    return { body: { members: members.map(memberWithUserView), total } };
  }

  async activeMember(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const organizationId = current.session.active_organization_id;
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION');
    const member = await this.repository.findMember(this.tenants.db(tenant), organizationId, current.user.id);
    if (!member) throw orgError(400, 'MEMBER_NOT_FOUND');
    return { body: memberWithUserView(member) };
  }

  async activeMemberRole(
    tenant: Tenant,
    meta: RequestMeta,
    query: { userId?: string | undefined; organizationId?: string | undefined; organizationSlug?: string | undefined },
  ): Promise<AuthResult> {
    const current = await this.sessions.require(tenant, meta);
    const db = this.tenants.db(tenant);
    const organizationId = await this.organizationOf(db, query, current.session.active_organization_id);
    const member = await this.repository.findMember(db, organizationId, current.user.id);
    if (!member) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
    if (!query.userId) return { body: { role: member.role } };
    const other = await this.repository.findMember(db, organizationId, query.userId);
    if (!other) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
    return { body: { role: other.role } };
  }

  private async owners(db: TenantDb, organizationId: string): Promise<number> {
    return (await this.repository.memberRoles(db, organizationId)).filter((role) => hasRole(role, CREATOR_ROLE)).length;
  }

  /** `organizationSlug`, else `organizationId`, else the session's active organization (list-members, get-active-member-role). */
  private async organizationOf(
    db: TenantDb,
    query: { organizationId?: string | undefined; organizationSlug?: string | undefined },
    active: string | null,
  ): Promise<string> {
    let organizationId = query.organizationId || active;
    if (query.organizationSlug) {
      const organization = await this.repository.findOrganization(db, { slug: query.organizationSlug });
      if (!organization) throw orgError(400, 'ORGANIZATION_NOT_FOUND');
      organizationId = organization.id;
    }
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION');
    return organizationId;
  }
}

function memberColumn(field: string): string {
  const column = Object.hasOwn(MEMBER_FIELDS, field) ? MEMBER_FIELDS[field] : undefined;
  if (!column) throw AuthErrors.validation(`[query] Unknown member field: ${field.slice(0, 40)}`);
  return column;
}
