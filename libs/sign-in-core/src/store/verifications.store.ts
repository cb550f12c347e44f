import { sha256Hex } from '@slipway/crypto';
import { newId } from './service-auth-db.js';
import type { ServiceAuthPool } from './service-auth-db.js';

/**
 * One-time tokens (password reset, email verification) in `service_auth.verifications`. The
 * identifier holds `<purpose>:<sha256(token)>`, so the raw token exists only in the email.
 */
export class VerificationsStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  async create(db: Db, purpose: string, token: string, value: string, ttlSeconds: number): Promise<void> {
    await db.query(`INSERT INTO service_auth.verifications (id, identifier, value, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`, [
      newId(),
      `${purpose}:${sha256Hex(token)}`,
      value,
      ttlSeconds,
    ]);
  }

  /** Takes (deletes and returns) an unexpired token's value; a token works once. */
  async consume(db: Db, purpose: string, token: string): Promise<string | null> {
    const { rows } = await db.query<{ value: string; expired: boolean }>(
      `DELETE FROM service_auth.verifications WHERE identifier = $1 RETURNING value, expires_at <= now() AS expired`,
      [`${purpose}:${sha256Hex(token)}`],
    );
    const row = rows[0];
    return row && !row.expired ? row.value : null;
  }

  /**
   * Deletes every outstanding token of one purpose for one value (a user's reset tokens once their
   * password changed by whatever means), so an older emailed link cannot set the password again.
   * Returns how many went.
   */
  async deleteAllFor(db: Db, purpose: string, value: string): Promise<number> {
    const { rowCount } = await db.query(`DELETE FROM service_auth.verifications WHERE identifier LIKE $1 AND value = $2`, [`${purpose}:%`, value]);
    return rowCount ?? 0;
  }

  /** Deletes the row of one exact identifier (an emailed code's `<type>-otp-<email>`). */
  async deleteIdentifier(db: Db, identifier: string): Promise<void> {
    await db.query(`DELETE FROM service_auth.verifications WHERE identifier = $1`, [identifier]);
  }

  /** Whether a token is still valid, without using it up. */
  async peek(db: Db, purpose: string, token: string): Promise<boolean> {
    const { rowCount } = await db.query(`SELECT 1 FROM service_auth.verifications WHERE identifier = $1 AND expires_at > now()`, [
      `${purpose}:${sha256Hex(token)}`,
    ]);
    return (rowCount ?? 0) > 0;
  }
}
