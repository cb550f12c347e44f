import { Injectable } from '@nestjs/common';
import { AuthError, type AuthResult } from '../common/index.js';
import { sessionCookie } from '../cookies/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { SessionsService, sessionView } from '../sessions/index.js';
import { TenantsService, requirePlugin, type Tenant } from '../tenants/index.js';
import { UsersRepository, userView } from '../users/index.js';
import { adminSessionCookie, adminTokenFromCookieHeader, clearedAdminSessionCookie } from './admin-cookie.js';
import { adminError, hasPermission, isAdminRole, userNotFound } from './admin-permissions.js';
import { AdminRepository } from './admin.repository.js';
import { AdminService } from './admin.service.js';

/** Better Auth's default `impersonationSessionDuration`: one hour. */
const IMPERSONATION_SECONDS = 3600;

const failed = (message: string) => new AuthError(500, 'INTERNAL_SERVER_ERROR', message);

/** `impersonate-user` and `stop-impersonating`: an admin acts as a user for an hour, their own session kept aside. */
@Injectable()
export class AdminImpersonationService {
  constructor(
    private readonly admin: AdminService,
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly users: UsersRepository,
    private readonly repository: AdminRepository,
  ) {}

  async impersonate(tenant: Tenant, meta: RequestMeta, userId: string): Promise<AuthResult> {
    const { current, by } = await this.admin.caller(tenant, meta, { user: ['impersonate'] }, 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS');
    const target = await this.users.findById(this.tenants.db(tenant), userId);
    if (!target) throw userNotFound();
    if (isAdminRole(target.role) && !hasPermission(current.user.role, { user: ['impersonate-admins'] })) throw adminError(403, 'YOU_CANNOT_IMPERSONATE_ADMINS');
    const expiresAt = new Date(Date.now() + IMPERSONATION_SECONDS * 1000);
    // Through SessionsService.start as every session: a banned user cannot be impersonated either (403 BANNED_USER).
    const started = await this.sessions.start(tenant, target, meta, false, { impersonatedBy: current.user.id, expiresAt });
    await this.repository.audit(this.tenants.db(tenant), by, {
      action: 'impersonate',
      targetUserId: target.id,
      details: { sessionId: started.session.id, expiresAt: expiresAt.toISOString() },
    });
    return {
      body: { session: sessionView(started.session, started.token), user: userView(target) },
      cookies: [adminSessionCookie(tenant, current.token, IMPERSONATION_SECONDS), started.cookie],
    };
  }

  async stop(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    requirePlugin(tenant, 'admin');
    const current = await this.sessions.require(tenant, meta);
    const adminId = current.session.impersonated_by;
    if (!adminId) throw new AuthError(400, 'BAD_REQUEST', 'You are not impersonating anyone');
    const adminToken = adminTokenFromCookieHeader(tenant, meta.cookieHeader);
    const adminSession = adminToken ? await this.sessions.byToken(tenant, adminToken) : null;
    // The kept session must be the very admin's who started this one (Better Auth's check).
    if (!adminToken || !adminSession || adminSession.user.id !== adminId) throw failed('Failed to find admin session');
    await this.sessions.end(tenant, current.session);
    await this.repository.audit(
      this.tenants.db(tenant),
      { actor: adminId, ip: meta.ip },
      { action: 'stop-impersonating', targetUserId: current.user.id, details: { sessionId: current.session.id } },
    );
    const remaining = Math.max(1, Math.floor((adminSession.session.expires_at.getTime() - Date.now()) / 1000));
    return {
      body: { session: sessionView(adminSession.session, adminToken), user: userView(adminSession.user) },
      cookies: [sessionCookie(tenant, adminToken, remaining), clearedAdminSessionCookie(tenant)],
    };
  }
}
