import type { ServiceAuthPool, UserAdminDb } from './service-auth-db.js';
import { USER_COLUMNS, liftExpiredBan, type UserRow } from './users.store.js';

export interface SessionRow {
  id: string;
  user_id: string;
  expires_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
  updated_at: Date;
  /** Organizations: the organization this session acts in. */
  active_organization_id: string | null;
  /** Admin: the admin's user id while this is an impersonation session. */
  impersonated_by: string | null;
}

const SESSION_FIELDS = [
  'id',
  'user_id',
  'expires_at',
  'ip_address',
  'user_agent',
  'created_at',
  'updated_at',
  'active_organization_id',
  'impersonated_by',
] as const;
const SESSION_COLUMNS = SESSION_FIELDS.map((c) => `s.${c}`).join(', ');
// The user's columns prefixed `u_` in the joined read.
const USER_FIELDS = USER_COLUMNS.split(', ');
const JOINED_USER_COLUMNS = USER_FIELDS.map((c) => `u.${c} AS u_${c}`).join(', ');

const SESSION_WITH_USER_SQL = `SELECT ${SESSION_COLUMNS}, ${JOINED_USER_COLUMNS} FROM service_auth.sessions s JOIN service_auth.users u ON u.id = s.user_id WHERE s.token_hash = $1`;

/** Sessions in the tenant's `service_auth.sessions`; tokens only ever as SHA-256. */
export class SessionsStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  /**
   * A new session, unless the user is banned: the insert locks the user row FOR SHARE and requires
   * `NOT banned`, so it cannot slip between a ban's update and its delete of the user's sessions
   * (`banUser` of @slipway/sign-in-core). Null when the user is banned (or gone).
   */
  async create(
    db: Db,
    session: {
      id: string;
      tokenHash: string;
      userId: string;
      expiresAt: Date;
      ip: string;
      userAgent: string | null;
      impersonatedBy?: string | null | undefined;
    },
  ): Promise<SessionRow | null> {
    const { rows } = await db.query<SessionRow>({
      name: 'auth-session-insert',
      text: `INSERT INTO service_auth.sessions AS s (id, token_hash, user_id, expires_at, ip_address, user_agent, impersonated_by)
             SELECT $1, $2, u.id, $4, $5, $6, $7 FROM service_auth.users u WHERE u.id = $3 AND NOT u.banned FOR SHARE OF u
             RETURNING ${SESSION_COLUMNS}`,
      values: [session.id, session.tokenHash, session.userId, session.expiresAt, session.ip, session.userAgent, session.impersonatedBy ?? null],
    });
    return rows[0] ?? null;
  }

  /** Better Auth's admin rule: a ban past its `ban_expires` is lifted when the user next signs in. */
  liftExpiredBan(db: Db, userId: string): Promise<boolean> {
    return liftExpiredBan(db, userId);
  }

  async findWithUser(db: Db, tokenHash: string): Promise<{ session: SessionRow; user: UserRow } | null> {
    // Named: each connection parses and plans it once (every get-session and token runs it).
    const { rows } = await db.query({ name: 'auth-session-with-user', text: SESSION_WITH_USER_SQL, values: [tokenHash] });
    const r = rows[0];
    if (!r) return null;
    const session = {} as Record<string, unknown>;
    for (const field of SESSION_FIELDS) session[field] = r[field];
    const user = {} as Record<string, unknown>;
    for (const field of USER_FIELDS) user[field] = r[`u_${field}`];
    return { session: session as unknown as SessionRow, user: user as unknown as UserRow };
  }

  /** The user's role in an organization (organization plugin), or null when not a member: the JWT's `organizationRole`. */
  async memberRole(db: Db, organizationId: string, userId: string): Promise<string | null> {
    const { rows } = await db.query<{ role: string }>({
      name: 'auth-session-member-role',
      text: 'SELECT role FROM service_auth.members WHERE organization_id = $1 AND user_id = $2',
      values: [organizationId, userId],
    });
    return rows[0]?.role ?? null;
  }

  async extend(db: Db, id: string, expiresAt: Date): Promise<void> {
    await db.query('UPDATE service_auth.sessions SET expires_at = $2, updated_at = now() WHERE id = $1', [id, expiresAt]);
  }

  listActive(db: Db, userId: string): Promise<SessionRow[]> {
    return listActiveSessions(db, userId);
  }

  async delete(db: Db, id: string): Promise<void> {
    await db.query('DELETE FROM service_auth.sessions WHERE id = $1', [id]);
  }

  /** Revokes one of the user's sessions, named by its raw token or (as list-sessions shows other sessions) its id. */
  async deleteOwned(db: Db, userId: string, tokenHash: string, id: string): Promise<number> {
    const { rowCount } = await db.query('DELETE FROM service_auth.sessions WHERE user_id = $1 AND (token_hash = $2 OR id = $3)', [userId, tokenHash, id]);
    return rowCount ?? 0;
  }

  async deleteAllOf(db: Db, userId: string, exceptId: string | null = null): Promise<void> {
    await db.query('DELETE FROM service_auth.sessions WHERE user_id = $1 AND ($2::text IS NULL OR id <> $2)', [userId, exceptId]);
  }
}

// Session rows changed as part of another store's transaction (bans, organizations, a mailbox
// proven): the SQL stays here, the caller hands its transaction's client (or a pool).

/** The user's unexpired sessions, oldest first. */
export async function listActiveSessions(db: UserAdminDb, userId: string): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM service_auth.sessions s WHERE s.user_id = $1 AND s.expires_at > now() ORDER BY s.created_at`,
    [userId],
  );
  return rows;
}

/** Ends one session, named by its token's hash or its id; its user, or null when there was none. */
export async function deleteSessionByTokenOrId(db: UserAdminDb, tokenHash: string, id: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string }>(`DELETE FROM service_auth.sessions WHERE token_hash = $1 OR id = $2 RETURNING user_id`, [tokenHash, id]);
  return rows[0]?.user_id ?? null;
}

/** Ends every session of the user; how many ended. */
export async function deleteSessionsOf(db: UserAdminDb, userId: string): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM service_auth.sessions WHERE user_id = $1`, [userId]);
  return rowCount ?? 0;
}

/** Ends every session of the user and every session they hold as an impersonating admin; the user id of each session ended (one entry per session). */
export async function deleteSessionsOfOrImpersonatedBy(db: UserAdminDb, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ user_id: string }>(`DELETE FROM service_auth.sessions WHERE user_id = $1 OR impersonated_by = $1 RETURNING user_id`, [
    userId,
  ]);
  return rows.map((r) => r.user_id);
}

/** The organization a session acts in (organization plugin), or none. */
export async function setActiveOrganization(db: UserAdminDb, sessionId: string, organizationId: string | null): Promise<void> {
  await db.query('UPDATE service_auth.sessions SET active_organization_id = $2, updated_at = now() WHERE id = $1', [sessionId, organizationId]);
}

/** Clears an organization from every session of the user that has it active (the user left it). */
export async function clearActiveOrganization(db: UserAdminDb, userId: string, organizationId: string): Promise<void> {
  await db.query('UPDATE service_auth.sessions SET active_organization_id = NULL, updated_at = now() WHERE user_id = $1 AND active_organization_id = $2', [
    userId,
    organizationId,
  ]);
}
