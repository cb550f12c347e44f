import { Injectable } from '@nestjs/common';
import type { AuditActor } from '@slipway/sign-in-core';
import { z } from '@slipway/config';
import { sha256Hex } from '@slipway/crypto';
import { AuthError, AuthErrors, newId, type AuthResult } from '../common/index.js';
import { PasswordHasher } from '../password/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, sessionView, type CurrentSession } from '../sessions/index.js';
import { TenantsService, requirePlugin, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView, type UserRow } from '../users/index.js';
import { ADMIN_ROLES, adminError, hasPermission, requirePermission, userNotFound, type AdminErrorCode } from './admin-permissions.js';
import { AdminRepository, UnknownFieldError, type UserWhere } from './admin.repository.js';
import type { ListUsersQuery } from './admin.dto.js';

/** Better Auth's list-users has no limit unless asked; here a page is at most this many users. */
const LIST_LIMIT_DEFAULT = 100;
const LIST_LIMIT_MAX = 1000;

/** The admin's signed-in session and how audit rows name them. */
export interface AdminCaller {
  current: CurrentSession;
  by: AuditActor;
}

/** Roles as Better Auth stores them (comma-separated); only its default roles may be given. */
export function roleValue(input: unknown): string {
  const roles = Array.isArray(input) ? input : [input];
  if (roles.length === 0) throw adminError(400, 'INVALID_ROLE_TYPE');
  for (const role of roles) {
    if (typeof role !== 'string') throw adminError(400, 'INVALID_ROLE_TYPE');
    if (!ADMIN_ROLES.includes(role)) throw adminError(400, 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE');
  }
  return roles.join(',');
}

/** Better Auth's admin plugin (`adminClient`): user administration by users whose role allows it. */
@Injectable()
export class AdminService {
  constructor(
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly users: UsersRepository,
    private readonly repository: AdminRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  /** The plugin is on, the request has a session (401), and its user's role allows `permissions` (403 `code`). */
  async caller(tenant: Tenant, meta: RequestMeta, permissions?: Record<string, string[]>, code?: AdminErrorCode): Promise<AdminCaller> {
    requirePlugin(tenant, 'admin');
    const current = await this.sessions.require(tenant, meta);
    if (permissions && code) requirePermission(current.user.role, permissions, code);
    return { current, by: { actor: current.user.id, ip: meta.ip } };
  }

  private async existing(tenant: Tenant, userId: string): Promise<UserRow> {
    const user = await this.users.findById(this.tenants.db(tenant), userId);
    if (!user) throw userNotFound();
    return user;
  }

  async listUsers(tenant: Tenant, meta: RequestMeta, query: ListUsersQuery): Promise<AuthResult> {
    await this.caller(tenant, meta, { user: ['list'] }, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS');
    const where: UserWhere[] = [];
    if (query.searchValue) where.push({ field: query.searchField ?? 'email', operator: query.searchOperator ?? 'contains', value: query.searchValue });
    if (query.filterValue !== undefined) where.push({ field: query.filterField ?? 'email', operator: query.filterOperator ?? 'eq', value: query.filterValue });
    const limit = Number(query.limit) || undefined;
    const offset = Number(query.offset) || undefined;
    try {
      const { users, total } = await this.repository.listUsers(this.tenants.db(tenant), {
        where,
        limit: Math.min(Math.max(limit ?? LIST_LIMIT_DEFAULT, 1), LIST_LIMIT_MAX),
        offset: Math.max(offset ?? 0, 0),
        sortBy: query.sortBy,
        sortDirection: query.sortDirection ?? 'asc',
      });
      return { body: { users: users.map(userView), total, limit, offset } };
    } catch (error) {
      // Better Auth answers an empty list when its adapter refuses the query (unknown field, a value of the wrong type).
      if (error instanceof UnknownFieldError || ['22P02', '22007', '22008', '42883'].includes((error as { code?: string }).code ?? ''))
        return { body: { users: [], total: 0 } };
      throw error;
    }
  }

  async getUser(tenant: Tenant, meta: RequestMeta, id: string): Promise<AuthResult> {
    await this.caller(tenant, meta, { user: ['get'] }, 'YOU_ARE_NOT_ALLOWED_TO_GET_USER');
    return { body: userView(await this.existing(tenant, id)) };
  }

  async createUser(
    tenant: Tenant,
    meta: RequestMeta,
    input: { email: string; password?: string | undefined; name: string; role?: string | string[] | undefined; data?: Record<string, unknown> | undefined },
  ): Promise<AuthResult> {
    const { current, by } = await this.caller(tenant, meta, { user: ['create'] }, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS');
    const { role: dataRole, emailVerified, image, ...rest } = input.data ?? {};
    const unsupported = Object.keys(rest);
    if (unsupported.length) throw AuthErrors.validation(`[body.data.${unsupported[0]}] not a field this service stores`);
    const requested = input.role ?? dataRole;
    let role = 'user';
    if (requested !== undefined) {
      requirePermission(current.user.role, { user: ['set-role'] }, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
      role = roleValue(requested);
    }
    const email = input.email.trim().toLowerCase();
    if (!z.email().safeParse(email).success) throw AuthErrors.invalidEmail();
    if (input.password) this.hasher.assertAcceptable(input.password);
    const credential = input.password ? { accountId: newId(), passwordHash: await this.hasher.hash(input.password) } : null;
    const user = await this.repository.createUser(
      this.tenants.db(tenant),
      { id: newId(), name: input.name, email, role, emailVerified: emailVerified === true, image: typeof image === 'string' ? image : null },
      credential,
      by,
    );
    if (!user) throw adminError(400, 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
    return { body: { user: userView(user) } };
  }

  /** Better Auth's admin update-user; `banned` goes through ban/unban so a ban ends the sessions here too. */
  async updateUser(tenant: Tenant, meta: RequestMeta, input: { userId: string; data: Record<string, unknown> }): Promise<AuthResult> {
    const caller = await this.caller(tenant, meta, { user: ['update'] }, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS');
    const role = caller.current.user.role;
    const data = input.data;
    const has = (key: string) => Object.hasOwn(data, key);
    if (Object.keys(data).length === 0) throw adminError(400, 'NO_DATA_TO_UPDATE');
    if (has('password')) throw adminError(400, 'PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER');
    if (has('id')) throw adminError(400, 'USER_ID_CANNOT_BE_UPDATED');
    const unsupported = Object.keys(data).filter((k) => !['name', 'image', 'email', 'emailVerified', 'role', 'banned', 'banReason', 'banExpires'].includes(k));
    if (unsupported.length) throw AuthErrors.validation(`[body.data.${unsupported[0]}] not a field this service stores`);
    const changes: { name?: string; image?: string | null; email?: string; emailVerified?: boolean; role?: string } = {};
    if (has('role')) {
      requirePermission(role, { user: ['set-role'] }, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
      changes.role = roleValue(data.role);
    }
    const banning = ['banned', 'banReason', 'banExpires'].some(has);
    if (banning) {
      requirePermission(role, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      if (data.banned === true && input.userId === caller.current.user.id) throw adminError(400, 'YOU_CANNOT_BAN_YOURSELF');
    }
    if (has('email') || has('emailVerified')) {
      requirePermission(role, { user: ['set-email'] }, 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL');
      if (has('email')) {
        const email = String(data.email).trim().toLowerCase();
        if (!z.email().safeParse(email).success) throw AuthErrors.invalidEmail();
        changes.email = email;
      }
      if (has('emailVerified')) changes.emailVerified = data.emailVerified === true;
    }
    if (has('name')) {
      if (typeof data.name !== 'string' || !data.name.trim() || data.name.length > 200) throw AuthErrors.validation('[body.data.name] Invalid input');
      changes.name = data.name.trim();
    }
    if (has('image')) {
      if (data.image !== null && (typeof data.image !== 'string' || data.image.length > 2048)) throw AuthErrors.validation('[body.data.image] Invalid input');
      changes.image = data.image as string | null;
    }
    const db = this.tenants.db(tenant);
    await this.existing(tenant, input.userId);
    if (Object.keys(changes).length) {
      const updated = await this.repository.updateUser(db, input.userId, changes, caller.by);
      if (updated === 'taken') throw adminError(400, 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
      if (!updated) throw userNotFound();
    }
    if (banning) {
      if (data.banned === false) await this.repository.unban(db, input.userId, caller.by);
      else if (data.banned === true)
        await this.banAndEnd(
          tenant,
          input.userId,
          { reason: typeof data.banReason === 'string' ? data.banReason : 'No reason', expiresAt: banExpiry(data.banExpires) },
          caller.by,
        );
    }
    await this.sessions.invalidateUsers(tenant, [input.userId]);
    return { body: userView(await this.existing(tenant, input.userId)) };
  }

  async setRole(tenant: Tenant, meta: RequestMeta, input: { userId: string; role: string | string[] }): Promise<AuthResult> {
    const { by } = await this.caller(tenant, meta, { user: ['set-role'] }, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
    const role = roleValue(input.role);
    if (!(await this.repository.setRole(this.tenants.db(tenant), input.userId, role, by))) throw userNotFound();
    await this.sessions.invalidateUsers(tenant, [input.userId]);
    return { body: { user: userView(await this.existing(tenant, input.userId)) } };
  }

  async ban(
    tenant: Tenant,
    meta: RequestMeta,
    input: { userId: string; banReason?: string | undefined; banExpiresIn?: number | undefined },
  ): Promise<AuthResult> {
    const { current, by } = await this.caller(tenant, meta, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
    await this.existing(tenant, input.userId);
    if (input.userId === current.user.id) throw adminError(400, 'YOU_CANNOT_BAN_YOURSELF');
    const expiresAt = input.banExpiresIn ? new Date(Date.now() + input.banExpiresIn * 1000) : null;
    await this.banAndEnd(tenant, input.userId, { reason: input.banReason || 'No reason', expiresAt }, by);
    return { body: { user: userView(await this.existing(tenant, input.userId)) } };
  }

  /** The ban and the end of the user's sessions, evicted from every replica's cache before the answer. */
  private async banAndEnd(tenant: Tenant, userId: string, ban: { reason: string; expiresAt: Date | null }, by: AuditActor): Promise<void> {
    const banned = await this.repository.ban(this.tenants.db(tenant), userId, ban, by);
    if (!banned) throw userNotFound();
    await this.sessions.invalidateUsers(tenant, banned.sessionsOf);
  }

  async unban(tenant: Tenant, meta: RequestMeta, userId: string): Promise<AuthResult> {
    const { by } = await this.caller(tenant, meta, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
    if (!(await this.repository.unban(this.tenants.db(tenant), userId, by))) throw userNotFound();
    await this.sessions.invalidateUsers(tenant, [userId]);
    return { body: { user: userView(await this.existing(tenant, userId)) } };
  }

  async listUserSessions(tenant: Tenant, meta: RequestMeta, userId: string): Promise<AuthResult> {
    await this.caller(tenant, meta, { session: ['list'] }, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS');
    const rows = await this.repository.listSessions(this.tenants.db(tenant), userId);
    // Only hashes of tokens are stored: each session's `token` is its id, which revoke-user-session accepts.
    return { body: { sessions: rows.map((s) => sessionView(s, s.id)) } };
  }

  async revokeUserSession(tenant: Tenant, meta: RequestMeta, sessionToken: string): Promise<AuthResult> {
    const { by } = await this.caller(tenant, meta, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
    const userId = await this.repository.revokeSession(this.tenants.db(tenant), sha256Hex(sessionToken), sessionToken, by);
    if (userId) await this.sessions.invalidateUsers(tenant, [userId]);
    return { body: { success: true } };
  }

  async revokeUserSessions(tenant: Tenant, meta: RequestMeta, userId: string): Promise<AuthResult> {
    const { by } = await this.caller(tenant, meta, { session: ['revoke'] }, 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS');
    if (!(await this.repository.revokeSessions(this.tenants.db(tenant), userId, by))) throw userNotFound();
    await this.sessions.invalidateUsers(tenant, [userId]);
    return { body: { success: true } };
  }

  async removeUser(tenant: Tenant, meta: RequestMeta, userId: string): Promise<AuthResult> {
    const { current, by } = await this.caller(tenant, meta, { user: ['delete'] }, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS');
    if (userId === current.user.id) throw adminError(400, 'YOU_CANNOT_REMOVE_YOURSELF');
    if (!(await this.repository.removeUser(this.tenants.db(tenant), userId, by))) throw userNotFound();
    await this.sessions.invalidateUsers(tenant, [userId]);
    return { body: { success: true } };
  }

  async setUserPassword(tenant: Tenant, meta: RequestMeta, input: { userId: string; newPassword: string }): Promise<AuthResult> {
    const { by } = await this.caller(tenant, meta, { user: ['set-password'] }, 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD');
    this.hasher.assertAcceptable(input.newPassword);
    const user = await this.existing(tenant, input.userId);
    await this.repository.setPassword(this.tenants.db(tenant), user.id, newId(), await this.hasher.hash(input.newPassword), by);
    return { body: { status: true } };
  }

  /** Any signed-in user may ask what their own role allows (Better Auth checks the session's user, not `userId`/`role`, when there is a session). */
  async hasPermission(tenant: Tenant, meta: RequestMeta, input: { permissions?: Record<string, string[]> | undefined }): Promise<AuthResult> {
    requirePlugin(tenant, 'admin');
    if (!input.permissions)
      throw new AuthError(400, 'INVALID_PERMISSION_CHECK_NO_PERMISSIONS_WERE_PASSED', 'invalid permission check. no permission(s) were passed.');
    const current = await this.sessions.require(tenant, meta);
    return { body: { error: null, success: hasPermission(current.user.role, input.permissions) } };
  }
}

function banExpiry(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  const date = new Date(value as string | number);
  if (Number.isNaN(date.getTime())) throw AuthErrors.validation('[body.data.banExpires] Invalid date');
  return date;
}
