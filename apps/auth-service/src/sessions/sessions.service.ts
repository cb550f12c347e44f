import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '@slipway/crypto';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError, AuthErrors, newId, throughRestart, type AuthResult } from '../common/index.js';
import { SESSION_MAX_AGE_SECONDS, clearedSessionCookie, sessionCookie, tokenFromCookieHeader } from '../cookies/index.js';
import type { RequestMeta } from '../pipeline/index.js';
import { TenantsService, pluginEnabled, type Tenant } from '../tenants/index.js';
import { TokensService, type OrganizationClaims } from '../tokens/index.js';
import { userView, type UserRow } from '../users/index.js';
import { SessionCache, type CachedSession } from './session-cache.js';
import { SessionsRepository, type SessionRow } from './sessions.repository.js';

const DAY_MS = 24 * 3600 * 1000;
const EXPIRES_IN_MS = SESSION_MAX_AGE_SECONDS * 1000;
/** Sessions are extended (and the cookie re-set) at most once a day, as Better Auth's updateAge. */
const UPDATE_AGE_MS = DAY_MS;

export interface CurrentSession {
  token: string;
  session: SessionRow;
  user: UserRow;
  /** The session cache's entry, when it answered or took what the database answered. */
  cached?: CachedSession | undefined;
}

/**
 * Sessions: the database is authoritative. Reads may come from SessionCache; every write that
 * ends or changes a session or user invalidates it on every replica before it answers, so a
 * sign-out or revocation counts on the next request whichever replica serves it.
 */
@Injectable()
export class SessionsService {
  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly tenants: TenantsService,
    private readonly repository: SessionsRepository,
    private readonly tokens: TokensService,
    private readonly cache: SessionCache,
  ) {}

  /**
   * A new session (new id and token on every sign-in) and its cookie: every sign-in path comes
   * here. A banned user gets none (403 BANNED_USER, Better Auth's admin rule, whether or not the
   * plugin is on: only an admin or the owner can ban); a ban past its expiry is lifted instead.
   * `impersonatedBy` and `expiresAt`: the admin plugin's impersonation sessions.
   */
  async start(
    tenant: Tenant,
    user: UserRow,
    meta: RequestMeta,
    rememberMe = true,
    options: { impersonatedBy?: string; expiresAt?: Date } = {},
  ): Promise<{ token: string; cookie: string; session: SessionRow }> {
    const token = newId();
    const expiresAt = options.expiresAt ?? new Date(Date.now() + (rememberMe ? EXPIRES_IN_MS : DAY_MS));
    const db = this.tenants.db(tenant);
    const row = {
      id: newId(),
      tokenHash: sha256Hex(token),
      userId: user.id,
      expiresAt,
      ip: meta.ip,
      userAgent: meta.userAgent,
      impersonatedBy: options.impersonatedBy,
    };
    let session = await this.repository.create(db, row);
    if (!session && (await this.repository.liftExpiredBan(db, user.id))) {
      await this.cache.invalidate(tenant, [user.id]);
      session = await this.repository.create(db, row);
    }
    if (!session) throw bannedUser();
    return { token, cookie: sessionCookie(tenant, token, rememberMe ? SESSION_MAX_AGE_SECONDS : null), session };
  }

  /** The session behind the request's cookie, or null (expired rows are deleted on sight). */
  async current(tenant: Tenant, meta: RequestMeta): Promise<CurrentSession | null> {
    const token = tokenFromCookieHeader(tenant, meta.cookieHeader);
    return token ? this.byToken(tenant, token) : null;
  }

  /** The session of a raw token (the cookie's, or one the admin plugin kept aside while impersonating), or null. */
  async byToken(tenant: Tenant, token: string): Promise<CurrentSession | null> {
    const tokenHash = sha256Hex(token);
    const cached = this.cache.get(tenant, tokenHash);
    if (cached && !isBanned(cached.user)) return { token, session: cached.session, user: cached.user, cached };
    const generation = this.cache.generation;
    const db = this.tenants.db(tenant);
    const found = await this.repository.findWithUser(db, tokenHash);
    if (!found) return null;
    // Belt and braces: a ban deletes the user's sessions; a row that survived it is no session.
    if (isBanned(found.user)) {
      await this.repository.delete(db, found.session.id);
      return null;
    }
    const absoluteEnd = found.session.created_at.getTime() + this.config.AUTH_SESSION_ABSOLUTE_DAYS * DAY_MS;
    const endsAt = Math.min(found.session.expires_at.getTime(), absoluteEnd);
    if (endsAt <= Date.now()) {
      await this.repository.delete(db, found.session.id);
      this.cache.forgetLocally(tenant, tokenHash);
      return null;
    }
    return { token, ...found, cached: this.cache.put(tenant, tokenHash, found, generation, endsAt) };
  }

  /** After a change to these users or their sessions in the database: no replica serves the old state from its cache. */
  invalidateUsers(tenant: Tenant, userIds: string[]): Promise<void> {
    return this.cache.invalidate(tenant, userIds);
  }

  /** The JWT for the current session's user; a cached session hands out its token again for a few seconds. */
  private async jwt(tenant: Tenant, current: CurrentSession): Promise<string> {
    const reusable = current.cached?.jwt;
    if (reusable && reusable.until > Date.now() && reusable.epoch === this.tokens.epoch) return reusable.token;
    const signed = await this.tokens.signReusable(tenant, current.user, await this.organizationClaims(tenant, current));
    if (current.cached) current.cached.jwt = signed;
    return signed.token;
  }

  /**
   * The active organization and the member's role for the JWT: one query, only for a session
   * with an active organization, kept with the cache entry (the organization routes invalidate
   * the users whose active organization or role they change; the members triggers announce
   * anyone else's changes). No claims unless the user is a member and the plugin is on.
   */
  private async organizationClaims(tenant: Tenant, current: CurrentSession): Promise<OrganizationClaims | null> {
    const id = current.session.active_organization_id;
    if (!id || !pluginEnabled(tenant, 'organization')) return null;
    if (current.cached?.organization !== undefined) return current.cached.organization;
    const role = await this.repository.memberRole(this.tenants.db(tenant), id, current.user.id);
    const claims = role === null ? null : { id, role };
    if (current.cached) current.cached.organization = claims;
    return claims;
  }

  async require(tenant: Tenant, meta: RequestMeta): Promise<CurrentSession> {
    const current = await this.current(tenant, meta);
    if (!current) throw AuthErrors.unauthorized();
    return current;
  }

  /** `GET /get-session`: `{session, user}` + `set-auth-jwt`, or JSON `null`. */
  async getSession(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    return throughRestart(() => this.readSession(tenant, meta), this.config.AUTH_DB_RESTART_WAIT_MS);
  }

  private async readSession(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    const current = await this.current(tenant, meta);
    if (!current) {
      const cookies = meta.cookieHeader?.includes('slipway.session_token=') ? [clearedSessionCookie(tenant)] : [];
      return { body: null, headers, cookies };
    }
    const cookies: string[] = [];
    let { session } = current;
    const lifetime = session.expires_at.getTime() - session.created_at.getTime();
    // Remember-me sessions slide; one-day (rememberMe:false) sessions keep their end.
    const absoluteEnd = session.created_at.getTime() + this.config.AUTH_SESSION_ABSOLUTE_DAYS * DAY_MS;
    const expires = session.expires_at.getTime();
    const due = lifetime > DAY_MS && expires - EXPIRES_IN_MS + UPDATE_AGE_MS <= Date.now();
    const wanted = Math.min(due ? Date.now() + EXPIRES_IN_MS : expires, absoluteEnd);
    if (wanted !== expires) {
      // A copy: the row may be the cache's, which other requests read.
      session = { ...session, expires_at: new Date(wanted) };
      await this.repository.extend(this.tenants.db(tenant), session.id, session.expires_at);
      await this.cache.invalidate(tenant, [session.user_id]);
      cookies.push(sessionCookie(tenant, current.token, Math.ceil((wanted - Date.now()) / 1000)));
    }
    headers['set-auth-jwt'] = await this.jwt(tenant, current);
    return { body: { session: sessionView(session, current.token), user: userView(current.user) }, headers, cookies };
  }

  async token(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    return throughRestart(async () => {
      const current = await this.require(tenant, meta);
      return { body: { token: await this.jwt(tenant, current) }, headers: { 'Cache-Control': 'no-store' } };
    }, this.config.AUTH_DB_RESTART_WAIT_MS);
  }

  async signOut(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const current = await this.current(tenant, meta);
    if (current) {
      await this.repository.delete(this.tenants.db(tenant), current.session.id);
      await this.cache.invalidate(tenant, [current.user.id]);
    }
    return { body: { success: true }, cookies: [clearedSessionCookie(tenant)] };
  }

  /** Other sessions carry their id in `token`: only hashes of their tokens are stored. */
  async list(tenant: Tenant, meta: RequestMeta): Promise<AuthResult> {
    const current = await this.require(tenant, meta);
    const rows = await this.repository.listActive(this.tenants.db(tenant), current.user.id);
    // As Better Auth's admin plugin: an admin's impersonation sessions are not the user's to see.
    return { body: rows.filter((s) => !s.impersonated_by).map((s) => sessionView(s, s.id === current.session.id ? current.token : s.id)) };
  }

  async revoke(tenant: Tenant, meta: RequestMeta, token: string): Promise<AuthResult> {
    const current = await this.require(tenant, meta);
    await this.repository.deleteOwned(this.tenants.db(tenant), current.user.id, sha256Hex(token), token);
    await this.cache.invalidate(tenant, [current.user.id]);
    return { body: { status: true } };
  }

  async revokeAll(tenant: Tenant, meta: RequestMeta, keepCurrent: boolean): Promise<AuthResult> {
    const current = await this.require(tenant, meta);
    await this.repository.deleteAllOf(this.tenants.db(tenant), current.user.id, keepCurrent ? current.session.id : null);
    await this.cache.invalidate(tenant, [current.user.id]);
    return { body: { status: true }, cookies: keepCurrent ? [] : [clearedSessionCookie(tenant)] };
  }

  /** Ends one session and evicts its user's entries on every replica. */
  async end(tenant: Tenant, session: SessionRow): Promise<void> {
    await this.repository.delete(this.tenants.db(tenant), session.id);
    await this.cache.invalidate(tenant, [session.user_id]);
  }

  async revokeAllOfUser(tenant: Tenant, userId: string, exceptSessionId: string | null = null): Promise<void> {
    await this.repository.deleteAllOf(this.tenants.db(tenant), userId, exceptSessionId);
    await this.cache.invalidate(tenant, [userId]);
  }
}

/** Better Auth's admin plugin's answer to a banned user's sign-in (its default `bannedUserMessage`). */
export function bannedUser(): AuthError {
  return new AuthError(403, 'BANNED_USER', 'You have been banned from this application. Please contact support if you believe this is an error.');
}

/** Banned now: a ban without an end, or one whose end is still ahead. */
export function isBanned(user: UserRow): boolean {
  return user.banned && (user.ban_expires === null || user.ban_expires.getTime() > Date.now());
}

export function sessionView(session: SessionRow, token: string) {
  return {
    id: session.id,
    token,
    userId: session.user_id,
    expiresAt: session.expires_at,
    createdAt: session.created_at,
    updatedAt: session.updated_at,
    ipAddress: session.ip_address,
    userAgent: session.user_agent,
    // The plugins' fields (organizations, admin), present whether or not the plugin is on.
    activeOrganizationId: session.active_organization_id,
    impersonatedBy: session.impersonated_by,
  };
}
