import { inTransaction } from './service-auth-db.js';
import { newId } from './service-auth-db.js';
import type { ServiceAuthPool } from './service-auth-db.js';

export interface TwoFactorRow {
  id: string;
  user_id: string;
  /** A keyring envelope (binding `twoFactorSecret(appId, userId)`). */
  secret: Buffer;
  /** SHA-256 hex of each unused backup code. */
  backup_codes: string[];
  verified: boolean;
}

/**
 * `service_auth.two_factors`, and the one user column the plugin owns (`users.two_factor_enabled`),
 * changed together with it in one transaction. Callers invalidate the session cache afterwards.
 */
export class TwoFactorStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  async findByUser(db: Db, userId: string): Promise<TwoFactorRow | null> {
    const { rows } = await db.query<TwoFactorRow>(`SELECT id, user_id, secret, backup_codes, verified FROM service_auth.two_factors WHERE user_id = $1`, [
      userId,
    ]);
    return rows[0] ?? null;
  }

  /**
   * A new secret and backup codes awaiting their first verified code; replaces an unverified
   * enrolment, never a verified one (false then: TOTP already enabled, even if two requests race).
   */
  async enrol(db: Db, userId: string, secret: Buffer, backupCodeHashes: string[]): Promise<boolean> {
    const { rowCount } = await db.query(
      `INSERT INTO service_auth.two_factors (id, user_id, secret, backup_codes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, backup_codes = EXCLUDED.backup_codes, last_totp_step = NULL, updated_at = now()
       WHERE service_auth.two_factors.verified = false`,
      [newId(), userId, secret, backupCodeHashes],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Records `step` as used if it is later than every step used before; false for a replayed (or older) code. */
  async acceptTotpStep(db: Db, id: string, step: number): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE service_auth.two_factors SET last_totp_step = $2, updated_at = now() WHERE id = $1 AND (last_totp_step IS NULL OR last_totp_step < $2)`,
      [id, step],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Takes one backup code out of the unused ones; false if it is not (or no longer) there. */
  async useBackupCode(db: Db, userId: string, codeHash: string): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE service_auth.two_factors SET backup_codes = array_remove(backup_codes, $2), updated_at = now() WHERE user_id = $1 AND $2 = ANY (backup_codes)`,
      [userId, codeHash],
    );
    return (rowCount ?? 0) > 0;
  }

  async replaceBackupCodes(db: Db, userId: string, codeHashes: string[]): Promise<boolean> {
    const { rowCount } = await db.query(`UPDATE service_auth.two_factors SET backup_codes = $2, updated_at = now() WHERE user_id = $1`, [userId, codeHashes]);
    return (rowCount ?? 0) > 0;
  }

  /** The first verified code: the enrolment counts and the user has two-factor on. */
  async confirm(db: Db, userId: string): Promise<void> {
    await this.inTransaction(db, async (query) => {
      await query(`UPDATE service_auth.two_factors SET verified = true, updated_at = now() WHERE user_id = $1`, [userId]);
      await query(`UPDATE service_auth.users SET two_factor_enabled = true, updated_at = now() WHERE id = $1 AND NOT two_factor_enabled`, [userId]);
    });
  }

  /** Two-factor by emailed code only (Better Auth's `method: "otp"`): on at once. */
  async enableOtpOnly(db: Db, userId: string): Promise<void> {
    await db.query(`UPDATE service_auth.users SET two_factor_enabled = true, updated_at = now() WHERE id = $1 AND NOT two_factor_enabled`, [userId]);
  }

  async disable(db: Db, userId: string): Promise<void> {
    await this.inTransaction(db, async (query) => {
      await query(`DELETE FROM service_auth.two_factors WHERE user_id = $1`, [userId]);
      await query(`UPDATE service_auth.users SET two_factor_enabled = false, updated_at = now() WHERE id = $1`, [userId]);
    });
  }

  private async inTransaction(db: Db, work: (query: (sql: string, params: unknown[]) => Promise<unknown>) => Promise<void>): Promise<void> {
    return inTransaction(db, async (client) => {
      await work((sql, params) => client.query(sql, params));
    });
  }
}
