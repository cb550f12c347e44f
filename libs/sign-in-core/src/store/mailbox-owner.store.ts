import { inTransaction } from './service-auth-db.js';
import type { ServiceAuthPool } from './service-auth-db.js';
import { deleteSessionsOf } from './sessions.store.js';
import { USER_COLUMNS, type UserRow } from './users.store.js';

/** The writes of a sign-in by email proof (magic link, email code) in the tenant's `service_auth`. */
export class MailboxOwnerStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  /** A user whose email is proven, with no account (as Better Auth's magic link and email OTP make one); null when the email is taken meanwhile. */
  async createVerified(db: Db, user: { id: string; email: string; name: string; image: string | null }): Promise<UserRow | null> {
    const { rows } = await db.query<UserRow>(
      `INSERT INTO service_auth.users (id, name, email, email_verified, image) VALUES ($1, $2, $3, true, $4)
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
      [user.id, user.name, user.email, user.image],
    );
    return rows[0] ?? null;
  }

  /**
   * Better Auth's `revokeUnprovenAccountAccess`, in one transaction: an unverified user's email is
   * now proven, so whatever was attached before the proof (a password, a social link, sessions —
   * perhaps someone else's, who signed up with this address) goes, and the email becomes verified.
   * Only the request that flips `email_verified` does it; a concurrent one gets null and finds the
   * user already verified (its own session, started after the commit, stays).
   */
  async promoteUnproven(db: Db, userId: string): Promise<UserRow | null> {
    return inTransaction(db, async (client) => {
      const { rows } = await client.query<UserRow>(
        `UPDATE service_auth.users SET email_verified = true, updated_at = now() WHERE id = $1 AND NOT email_verified RETURNING ${USER_COLUMNS}`,
        [userId],
      );
      if (rows[0]) {
        await client.query(`DELETE FROM service_auth.accounts WHERE user_id = $1`, [userId]);
        await deleteSessionsOf(client, userId);
      }
      return rows[0] ?? null;
    });
  }
}
