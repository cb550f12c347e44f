import { randomAlphanumeric } from '@slipway/crypto';
import { deleteSessionsOf, deleteSessionsOfOrImpersonatedBy } from './sessions.store.js';
import { inTransaction, type UserAdminDb } from './service-auth-db.js';

/**
 * The user-administration writes both doors make on an application's `service_auth` (issue 33):
 * the sign-in service's admin routes (Better Auth's admin plugin) and the owners' dashboard in
 * the gateway. One place for their SQL, so a ban means the same thing whoever gives it. Each
 * write and its audit row commit together.
 *
 * Neither door is told about the other's session cache: the sign-in service evicts what these
 * writes change through its own invalidation (its admin routes) or through the NOTIFY triggers
 * on `service_auth.users` and `service_auth.sessions` (migration 20261123090000; the gateway).
 */

/** Who acts: an admin user's id, or `owner:<ownerId>` from the owners' dashboard; and from which address. */
export interface AuditActor {
  actor: string;
  ip: string | null;
}

export type AdminAuditAction =
  | 'ban'
  | 'unban'
  | 'set-role'
  | 'impersonate'
  | 'stop-impersonating'
  | 'revoke-session'
  | 'revoke-sessions'
  | 'remove'
  | 'set-password'
  | 'create-user'
  | 'update-user';

export interface AdminAuditEntry {
  action: AdminAuditAction;
  targetUserId: string | null;
  details?: Record<string, unknown>;
}

/** Better Auth's default roles (its admin plugin without `roles` configured). */
export const ADMIN_DEFAULT_ROLES = ['admin', 'user'] as const;

/** One audit row; call it inside the change's own transaction (or alone for actions that change nothing else). */
export async function insertAdminAudit(db: UserAdminDb, by: AuditActor, entry: AdminAuditEntry): Promise<void> {
  await db.query(`INSERT INTO service_auth.admin_audit (id, actor_user_id, action, target_user_id, details, ip_address) VALUES ($1, $2, $3, $4, $5, $6)`, [
    randomAlphanumeric(32),
    by.actor,
    entry.action,
    entry.targetUserId,
    JSON.stringify(entry.details ?? {}),
    by.ip,
  ]);
}

/**
 * Bans a user and ends, in the same transaction, every session of theirs and every session they
 * hold as an impersonating admin. The user row is updated first: a session being created at the
 * same moment (SessionsRepository's insert locks the user row FOR SHARE and requires `NOT banned`)
 * either committed before, and is deleted here, or waits and then sees the ban.
 * Returns the ids of users whose sessions ended (for cache invalidation), or null when the user is unknown.
 */
export async function banUser(
  db: UserAdminDb,
  userId: string,
  ban: { reason: string; expiresAt: Date | null },
  by: AuditActor,
): Promise<{ sessionsOf: string[] } | null> {
  return inTransaction(db, async (client) => {
    const updated = await client.query(
      `UPDATE service_auth.users SET banned = true, ban_reason = $2, ban_expires = $3, updated_at = now() WHERE id = $1 RETURNING id`,
      [userId, ban.reason, ban.expiresAt],
    );
    if (!updated.rowCount) return null;
    const endedOf = await deleteSessionsOfOrImpersonatedBy(client, userId);
    await insertAdminAudit(client, by, {
      action: 'ban',
      targetUserId: userId,
      details: { reason: ban.reason, expiresAt: ban.expiresAt?.toISOString() ?? null, sessionsEnded: endedOf.length },
    });
    return { sessionsOf: [...new Set([userId, ...endedOf])] };
  });
}

/** Lifts a ban; false when the user is unknown. */
export async function unbanUser(db: UserAdminDb, userId: string, by: AuditActor): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const updated = await client.query(
      `UPDATE service_auth.users SET banned = false, ban_reason = NULL, ban_expires = NULL, updated_at = now() WHERE id = $1`,
      [userId],
    );
    if (!updated.rowCount) return false;
    await insertAdminAudit(client, by, { action: 'unban', targetUserId: userId });
    return true;
  });
}

/** Sets the user's role (a comma-separated list, as Better Auth stores it); false when the user is unknown. */
export async function setUserRole(db: UserAdminDb, userId: string, role: string, by: AuditActor): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const before = await client.query<{ role: string }>(`SELECT role FROM service_auth.users WHERE id = $1 FOR UPDATE`, [userId]);
    if (!before.rows[0]) return false;
    await client.query(`UPDATE service_auth.users SET role = $2, updated_at = now() WHERE id = $1`, [userId, role]);
    await insertAdminAudit(client, by, { action: 'set-role', targetUserId: userId, details: { from: before.rows[0].role, to: role } });
    return true;
  });
}

/** Ends every session of the user; null when the user is unknown, else how many ended. */
export async function revokeUserSessions(db: UserAdminDb, userId: string, by: AuditActor): Promise<{ ended: number } | null> {
  return inTransaction(db, async (client) => {
    const found = await client.query(`SELECT 1 FROM service_auth.users WHERE id = $1 FOR SHARE`, [userId]);
    if (!found.rowCount) return null;
    const ended = await deleteSessionsOf(client, userId);
    await insertAdminAudit(client, by, { action: 'revoke-sessions', targetUserId: userId, details: { sessionsEnded: ended } });
    return { ended };
  });
}
