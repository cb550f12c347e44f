import { inTransaction } from './service-auth-db.js';
import { newId } from './service-auth-db.js';
import type { ServiceAuthPool } from './service-auth-db.js';

/** What a guess at a stored code came to. */
export type CodeCheck = 'ok' | 'missing' | 'expired' | 'exhausted' | 'wrong';

/**
 * Emailed codes in `service_auth.verifications`, as Better Auth keeps them: identifier
 * `<type>-otp-<email>`, value `<stored code>:<attempts>` — here the stored code is its SHA-256,
 * never the code. One live code per identifier.
 */
export class EmailOtpStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  /** Replaces the identifier's code by a new one with no attempts used. */
  async issue(db: Db, identifier: string, codeHash: string, ttlSeconds: number): Promise<void> {
    await db.query(
      `WITH old AS (DELETE FROM service_auth.verifications WHERE identifier = $2)
       INSERT INTO service_auth.verifications (id, identifier, value, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
      [newId(), identifier, `${codeHash}:0`, ttlSeconds],
    );
  }

  /**
   * One guess, serialised per identifier (the row is locked, so parallel guesses are counted one
   * by one): expired → deleted; `allowed` attempts used → deleted (the code is dead); a wrong
   * guess → one more attempt recorded; right → deleted unless `keep` (Better Auth's
   * check-verification-otp leaves it for the next step, attempts unchanged).
   */
  async check(db: Db, identifier: string, matches: (storedHash: string) => boolean, allowed: number, keep: boolean): Promise<CodeCheck> {
    return inTransaction(db, async (client) => {
      const { rows } = await client.query<{ id: string; value: string; expired: boolean }>(
        `SELECT id, value, expires_at <= now() AS expired FROM service_auth.verifications WHERE identifier = $1 ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [identifier],
      );
      const row = rows[0];
      let outcome: CodeCheck;
      if (!row) outcome = 'missing';
      else {
        const at = row.value.lastIndexOf(':');
        const [storedHash, attempts] = [row.value.slice(0, at), Number(row.value.slice(at + 1)) || 0];
        if (row.expired) outcome = 'expired';
        else if (attempts >= allowed) outcome = 'exhausted';
        else outcome = matches(storedHash) ? 'ok' : 'wrong';
        if (outcome === 'wrong')
          await client.query(`UPDATE service_auth.verifications SET value = $2, updated_at = now() WHERE id = $1`, [row.id, `${storedHash}:${attempts + 1}`]);
        else if (!(outcome === 'ok' && keep)) await client.query(`DELETE FROM service_auth.verifications WHERE identifier = $1`, [identifier]);
      }
      return outcome;
    });
  }
}
