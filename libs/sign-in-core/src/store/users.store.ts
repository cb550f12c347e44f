import { inTransaction, newId } from './service-auth-db.js';
import type { ServiceAuthPool, UserAdminDb } from './service-auth-db.js';

export interface UserRow {
  id: string;
  name: string;
  email: string;
  email_verified: boolean;
  image: string | null;
  created_at: Date;
  updated_at: Date;
  /** Two-factor: the user finished enrolling a second factor. */
  two_factor_enabled: boolean;
  /** Admin: `user`, `admin`, or a comma-separated list (Better Auth's admin plugin). */
  role: string;
  banned: boolean;
  ban_reason: string | null;
  /** null: banned for ever (while `banned`). */
  ban_expires: Date | null;
}

/** Every column of `UserRow`, in one place (queries that join write them with `u.` through `userColumns`). */
export const USER_COLUMNS = 'id, name, email, email_verified, image, created_at, updated_at, two_factor_enabled, role, banned, ban_reason, ban_expires';
/** `USER_COLUMNS` qualified with a table alias: `userColumns('u')` → `u.id, u.name, …`. */
export const userColumns = (alias: string) =>
  USER_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** Users and their accounts in the tenant's `service_auth` schema. */
export class UsersStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  /** Creates a user with a credential account; null when the email is taken. */
  async createWithPassword(
    db: Db,
    user: { id: string; name: string; email: string; image: string | null },
    accountId: string,
    passwordHash: string,
  ): Promise<UserRow | null> {
    return inTransaction(db, async (client) => {
      const { rows } = await client.query<UserRow>(
        `INSERT INTO service_auth.users (id, name, email, image) VALUES ($1, $2, $3, $4) ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
        [user.id, user.name, user.email, user.image],
      );
      // The email is taken: nothing was written, so the transaction ends empty.
      if (!rows[0]) return null;
      await client.query(`INSERT INTO service_auth.accounts (id, user_id, provider_id, account_id, password) VALUES ($1, $2, 'credential', $2, $3)`, [
        accountId,
        user.id,
        passwordHash,
      ]);
      return rows[0];
    });
  }

  async findByEmail(db: Db, email: string): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM service_auth.users WHERE lower(email) = lower($1)`, [email]);
    return rows[0] ?? null;
  }

  async findById(db: Db, id: string): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM service_auth.users WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** The user and their credential password hash (null when the email has no credential account). */
  async findCredential(db: Db, email: string): Promise<{ user: UserRow; passwordHash: string } | null> {
    // Named (prepared once per connection): every sign-in runs it.
    const { rows } = await db.query({
      name: 'auth-credential-by-email',
      text: `SELECT ${userColumns('u')}, a.password
         FROM service_auth.users u JOIN service_auth.accounts a ON a.user_id = u.id AND a.provider_id = 'credential'
        WHERE lower(u.email) = lower($1)`,
      values: [email],
    });
    const r = rows[0];
    if (!r?.password) return null;
    const { password, ...user } = r;
    return { user: user as UserRow, passwordHash: password as string };
  }

  async passwordHashOf(db: Db, userId: string): Promise<string | null> {
    const { rows } = await db.query<{ password: string | null }>(
      `SELECT password FROM service_auth.accounts WHERE user_id = $1 AND provider_id = 'credential'`,
      [userId],
    );
    return rows[0]?.password ?? null;
  }

  async setPassword(db: Db, userId: string, accountId: string, passwordHash: string): Promise<void> {
    await db.query(
      `INSERT INTO service_auth.accounts (id, user_id, provider_id, account_id, password) VALUES ($1, $2, 'credential', $2, $3)
       ON CONFLICT (provider_id, account_id) DO UPDATE SET password = EXCLUDED.password, updated_at = now()`,
      [accountId, userId, passwordHash],
    );
  }

  async update(db: Db, userId: string, changes: { name?: string | undefined; image?: string | null | undefined }): Promise<void> {
    await db.query(`UPDATE service_auth.users SET name = COALESCE($2, name), image = CASE WHEN $4 THEN $3 ELSE image END, updated_at = now() WHERE id = $1`, [
      userId,
      changes.name ?? null,
      changes.image ?? null,
      changes.image !== undefined,
    ]);
  }

  async findByAccount(db: Db, providerId: string, accountId: string): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(
      `SELECT ${userColumns('u')} FROM service_auth.users u
         JOIN service_auth.accounts a ON a.user_id = u.id WHERE a.provider_id = $1 AND a.account_id = $2`,
      [providerId, accountId],
    );
    return rows[0] ?? null;
  }

  /**
   * Links a provider account to a user. The provider's access token is not kept: the service
   * only needs the identity, and a stored token would be a secret in a plaintext column.
   */
  async linkAccount(db: Db, userId: string, profile: SocialProfile, scope: string | null): Promise<void> {
    await db.query(
      `INSERT INTO service_auth.accounts (id, user_id, provider_id, account_id, scope) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (provider_id, account_id) DO UPDATE SET scope = EXCLUDED.scope, updated_at = now()`,
      [newId(), userId, profile.providerId, profile.accountId, scope],
    );
  }

  /** A new user from a provider profile; null when the email is taken meanwhile. */
  async createFromProfile(db: Db, profile: SocialProfile): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(
      `INSERT INTO service_auth.users (id, name, email, email_verified, image) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
      [newId(), profile.name, profile.email.toLowerCase(), profile.emailVerified, profile.image],
    );
    return rows[0] ?? null;
  }

  async markEmailVerified(db: Db, email: string): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(
      `UPDATE service_auth.users SET email_verified = true, updated_at = now() WHERE lower(email) = lower($1) RETURNING ${USER_COLUMNS}`,
      [email],
    );
    return rows[0] ?? null;
  }
}

export interface SocialProfile {
  providerId: string;
  accountId: string;
  email: string;
  emailVerified: boolean;
  name: string;
  image: string | null;
}

/** Better Auth's rule: a ban whose `ban_expires` has passed is lifted at the user's next sign-in. True when it was. */
export async function liftExpiredBan(db: UserAdminDb, userId: string): Promise<boolean> {
  const lifted = await db.query(
    `UPDATE service_auth.users SET banned = false, ban_reason = NULL, ban_expires = NULL, updated_at = now()
      WHERE id = $1 AND banned AND ban_expires IS NOT NULL AND ban_expires <= now()`,
    [userId],
  );
  return (lifted.rowCount ?? 0) > 0;
}

/** A user as the owners' dashboard lists it (gateway), read with the application's own role. */
export interface ServiceUserRow {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  created_at: Date;
  role: string;
  banned: boolean;
  ban_reason: string | null;
  ban_expires: Date | null;
}

const SERVICE_USER_COLUMNS = 'id, email, name, email_verified, created_at, role, banned, ban_reason, ban_expires';

/** The application's users, newest first, whose email or name contains `search` (any when empty), and how many match. */
export async function listServiceUsers(db: UserAdminDb, search: string, limit: number): Promise<{ users: ServiceUserRow[]; total: number }> {
  const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where = search ? 'WHERE email ILIKE $1 OR name ILIKE $1' : 'WHERE $1::text IS NOT NULL';
  const rows = await db.query<ServiceUserRow>(`SELECT ${SERVICE_USER_COLUMNS} FROM service_auth.users ${where} ORDER BY created_at DESC LIMIT ${limit}`, [
    pattern,
  ]);
  const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM service_auth.users ${where}`, [pattern]);
  return { users: rows.rows, total: count.rows[0]!.n };
}

/** One user as the dashboard shows it, or null. */
export async function findServiceUser(db: UserAdminDb, userId: string): Promise<ServiceUserRow | null> {
  const { rows } = await db.query<ServiceUserRow>(`SELECT ${SERVICE_USER_COLUMNS} FROM service_auth.users WHERE id = $1`, [userId]);
  return rows[0] ?? null;
}
