import { inTransaction } from './service-auth-db.js';
import { banUser, insertAdminAudit, revokeUserSessions, setUserRole, unbanUser, type AdminAuditEntry, type AuditActor } from './user-admin.js';
import { deleteSessionByTokenOrId, listActiveSessions, type SessionRow } from './sessions.store.js';
import type { ServiceAuthPool } from './service-auth-db.js';
import { USER_COLUMNS, type UserRow } from './users.store.js';

/** The user's fields Better Auth's list-users may search, filter and sort by, and their columns. */
const FIELDS: Record<string, string> = {
  id: 'id',
  name: 'name',
  email: 'email',
  emailVerified: 'email_verified',
  image: 'image',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  role: 'role',
  banned: 'banned',
  banReason: 'ban_reason',
  banExpires: 'ban_expires',
  twoFactorEnabled: 'two_factor_enabled',
};

export type WhereOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'not_in' | 'contains' | 'starts_with' | 'ends_with';
export interface UserWhere {
  field: string;
  operator: WhereOperator;
  value: string | number | boolean | (string | number)[];
}
export interface UserListQuery {
  where: UserWhere[];
  limit: number;
  offset: number;
  sortBy?: string | undefined;
  sortDirection: 'asc' | 'desc';
}

/** An unknown field: Better Auth's adapter throws, and list-users answers an empty list. */
export class UnknownFieldError extends Error {}

const likeEscape = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

function column(field: string): string {
  const c = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
  if (!c) throw new UnknownFieldError(field);
  return c;
}

/** One condition as SQL with its parameters appended to `values`. Searches are case-blind (ILIKE). */
function condition(w: UserWhere, values: unknown[]): string {
  const c = column(w.field);
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  switch (w.operator) {
    case 'eq':
      return `${c} = ${param(w.value)}`;
    case 'ne':
      return `${c} IS DISTINCT FROM ${param(w.value)}`;
    case 'lt':
      return `${c} < ${param(w.value)}`;
    case 'lte':
      return `${c} <= ${param(w.value)}`;
    case 'gt':
      return `${c} > ${param(w.value)}`;
    case 'gte':
      return `${c} >= ${param(w.value)}`;
    case 'in':
      return `${c}::text = ANY(${param((Array.isArray(w.value) ? w.value : [w.value]).map(String))}::text[])`;
    case 'not_in':
      return `NOT (${c}::text = ANY(${param((Array.isArray(w.value) ? w.value : [w.value]).map(String))}::text[]))`;
    case 'contains':
      return `${c}::text ILIKE ${param(`%${likeEscape(String(w.value))}%`)}`;
    case 'starts_with':
      return `${c}::text ILIKE ${param(`${likeEscape(String(w.value))}%`)}`;
    case 'ends_with':
      return `${c}::text ILIKE ${param(`%${likeEscape(String(w.value))}`)}`;
  }
}

/** The admin plugin's reads and writes of `service_auth` (ban, unban, role, revoke and audit SQL shared with the gateway in @slipway/sign-in-core). */
export class AdminStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  async listUsers(db: Db, query: UserListQuery): Promise<{ users: UserRow[]; total: number }> {
    const values: unknown[] = [];
    const where = query.where.length ? `WHERE ${query.where.map((w) => condition(w, values)).join(' AND ')}` : '';
    const order = query.sortBy ? `${column(query.sortBy)} ${query.sortDirection === 'desc' ? 'DESC' : 'ASC'}, id` : 'created_at, id';
    const count = values.length;
    const [rows, total] = await Promise.all([
      db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM service_auth.users ${where} ORDER BY ${order} LIMIT $${count + 1} OFFSET $${count + 2}`, [
        ...values,
        query.limit,
        query.offset,
      ]),
      db.query<{ n: number }>(`SELECT count(*)::int AS n FROM service_auth.users ${where}`, values),
    ]);
    return { users: rows.rows, total: total.rows[0]!.n };
  }

  /** A user and, when given, their credential account, with the audit row; null when the email is taken. */
  async createUser(
    db: Db,
    user: { id: string; name: string; email: string; role: string; emailVerified: boolean; image: string | null },
    credential: { accountId: string; passwordHash: string } | null,
    by: AuditActor,
  ): Promise<UserRow | null> {
    return inTransaction(db, async (client) => {
      const { rows } = await client.query<UserRow>(
        `INSERT INTO service_auth.users (id, name, email, role, email_verified, image) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
        [user.id, user.name, user.email, user.role, user.emailVerified, user.image],
      );
      // The email is taken: nothing was written, so the transaction ends empty.
      if (!rows[0]) return null;
      if (credential) {
        await client.query(`INSERT INTO service_auth.accounts (id, user_id, provider_id, account_id, password) VALUES ($1, $2, 'credential', $2, $3)`, [
          credential.accountId,
          user.id,
          credential.passwordHash,
        ]);
      }
      await insertAdminAudit(client, by, {
        action: 'create-user',
        targetUserId: user.id,
        details: { email: user.email, role: user.role, withPassword: credential !== null },
      });
      return rows[0];
    });
  }

  /** Name, image, email, email_verified, role; null when the user is unknown, 'taken' when the email is another user's. */
  async updateUser(
    db: Db,
    userId: string,
    changes: {
      name?: string | undefined;
      image?: string | null | undefined;
      email?: string | undefined;
      emailVerified?: boolean | undefined;
      role?: string | undefined;
    },
    by: AuditActor,
  ): Promise<UserRow | null | 'taken'> {
    try {
      return await inTransaction(db, async (client) => {
        const { rows } = await client.query<UserRow>(
          `UPDATE service_auth.users SET
           name = COALESCE($2, name), image = CASE WHEN $3 THEN $4 ELSE image END, email = COALESCE($5, email),
           email_verified = COALESCE($6, email_verified), role = COALESCE($7, role), updated_at = now()
         WHERE id = $1 RETURNING ${USER_COLUMNS}`,
          [
            userId,
            changes.name ?? null,
            changes.image !== undefined,
            changes.image ?? null,
            changes.email ?? null,
            changes.emailVerified ?? null,
            changes.role ?? null,
          ],
        );
        // Unknown user: nothing was written, so the transaction ends empty.
        if (!rows[0]) return null;
        await insertAdminAudit(client, by, {
          action: 'update-user',
          targetUserId: userId,
          details: { fields: Object.keys(changes).filter((k) => changes[k as keyof typeof changes] !== undefined) },
        });
        return rows[0];
      });
    } catch (error) {
      // Rolled back by inTransaction: the new email is another user's.
      if ((error as { code?: string }).code === '23505') return 'taken';
      throw error;
    }
  }

  ban(db: Db, userId: string, ban: { reason: string; expiresAt: Date | null }, by: AuditActor) {
    return banUser(db, userId, ban, by);
  }

  unban(db: Db, userId: string, by: AuditActor) {
    return unbanUser(db, userId, by);
  }

  setRole(db: Db, userId: string, role: string, by: AuditActor) {
    return setUserRole(db, userId, role, by);
  }

  revokeSessions(db: Db, userId: string, by: AuditActor) {
    return revokeUserSessions(db, userId, by);
  }

  audit(db: Db, by: AuditActor, entry: AdminAuditEntry): Promise<void> {
    return insertAdminAudit(db, by, entry);
  }

  listSessions(db: Db, userId: string): Promise<SessionRow[]> {
    return listActiveSessions(db, userId);
  }

  /** Ends one session, named by its raw token or its id (list-user-sessions shows ids: only hashes are stored). Returns its user, or null. */
  async revokeSession(db: Db, tokenHash: string, id: string, by: AuditActor): Promise<string | null> {
    const userId = await deleteSessionByTokenOrId(db, tokenHash, id);
    if (userId) await insertAdminAudit(db, by, { action: 'revoke-session', targetUserId: userId });
    return userId;
  }

  /** Deletes the user (sessions and accounts go with it, by cascade) with the audit row; false when unknown. */
  async removeUser(db: Db, userId: string, by: AuditActor): Promise<boolean> {
    return inTransaction(db, async (client) => {
      const gone = await client.query<{ email: string }>(`DELETE FROM service_auth.users WHERE id = $1 RETURNING email`, [userId]);
      if (gone.rows[0]) await insertAdminAudit(client, by, { action: 'remove', targetUserId: userId, details: { email: gone.rows[0].email } });
      return (gone.rowCount ?? 0) > 0;
    });
  }

  /** The user's credential password (created when they had none), their outstanding reset links dropped, and the audit row. */
  async setPassword(db: Db, userId: string, accountId: string, passwordHash: string, by: AuditActor): Promise<void> {
    return inTransaction(db, async (client) => {
      await client.query(
        `INSERT INTO service_auth.accounts (id, user_id, provider_id, account_id, password) VALUES ($1, $2, 'credential', $2, $3)
         ON CONFLICT (provider_id, account_id) DO UPDATE SET password = EXCLUDED.password, updated_at = now()`,
        [accountId, userId, passwordHash],
      );
      await client.query(`DELETE FROM service_auth.verifications WHERE identifier LIKE 'reset-password:%' AND value = $1`, [userId]);
      await insertAdminAudit(client, by, { action: 'set-password', targetUserId: userId });
    });
  }
}
