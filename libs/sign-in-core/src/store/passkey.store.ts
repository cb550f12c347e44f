import { newId } from './service-auth-db.js';
import type { ServiceAuthPool } from './service-auth-db.js';

export interface PasskeyRow {
  id: string;
  name: string | null;
  public_key: string;
  user_id: string;
  credential_id: string;
  /** BIGINT in the table; pg hands it over as a string, read back as a number (a signature counter is 32 bits). */
  counter: number;
  device_type: string;
  backed_up: boolean;
  transports: string | null;
  created_at: Date;
  aaguid: string | null;
}

const COLUMNS = 'id, name, public_key, user_id, credential_id, counter::float8 AS counter, device_type, backed_up, transports, created_at, aaguid';

/** `service_auth.passkeys` of one tenant database. */
export class PasskeyStore<Db extends ServiceAuthPool = ServiceAuthPool> {
  async listByUser(db: Db, userId: string): Promise<PasskeyRow[]> {
    const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM service_auth.passkeys WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
    return rows;
  }

  async findById(db: Db, id: string): Promise<PasskeyRow | null> {
    const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM service_auth.passkeys WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async findByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | null> {
    const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM service_auth.passkeys WHERE credential_id = $1`, [credentialId]);
    return rows[0] ?? null;
  }

  /** The new row, or null when this credential id is already registered in the application. */
  async create(
    db: Db,
    passkey: {
      name: string | null;
      publicKey: string;
      userId: string;
      credentialId: string;
      counter: number;
      deviceType: string;
      backedUp: boolean;
      transports: string;
      aaguid: string;
    },
  ): Promise<PasskeyRow | null> {
    const { rows } = await db.query<PasskeyRow>(
      `INSERT INTO service_auth.passkeys (id, name, public_key, user_id, credential_id, counter, device_type, backed_up, transports, aaguid)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (credential_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        newId(),
        passkey.name,
        passkey.publicKey,
        passkey.userId,
        passkey.credentialId,
        passkey.counter,
        passkey.deviceType,
        passkey.backedUp,
        passkey.transports,
        passkey.aaguid,
      ],
    );
    return rows[0] ?? null;
  }

  /**
   * Records a verified assertion's counter, only if the row still holds the counter it was verified
   * against: of two uses of one assertion at once, one wins (false for the other). Authenticators
   * that keep no counter (always 0) stay at 0.
   */
  async advanceCounter(db: Db, id: string, verifiedAgainst: number, newCounter: number): Promise<boolean> {
    const { rowCount } = await db.query(`UPDATE service_auth.passkeys SET counter = $3 WHERE id = $1 AND counter = $2`, [id, verifiedAgainst, newCounter]);
    return (rowCount ?? 0) === 1;
  }

  async rename(db: Db, id: string, userId: string, name: string): Promise<PasskeyRow | null> {
    const { rows } = await db.query<PasskeyRow>(`UPDATE service_auth.passkeys SET name = $3 WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`, [
      id,
      userId,
      name,
    ]);
    return rows[0] ?? null;
  }

  async delete(db: Db, id: string, userId: string): Promise<boolean> {
    const { rowCount } = await db.query(`DELETE FROM service_auth.passkeys WHERE id = $1 AND user_id = $2`, [id, userId]);
    return (rowCount ?? 0) === 1;
  }
}
