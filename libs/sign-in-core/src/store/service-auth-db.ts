import { randomAlphanumeric } from '@slipway/crypto';
import type pg from 'pg';

/**
 * A pool on one application's own database, connected as that application's role, where the
 * `service_auth` schema lives. The stores are generic over it (`Db extends ServiceAuthPool`) so an
 * app can narrow it: the sign-in service binds them to its branded `TenantDb`, which a plain
 * pool (the platform's) does not satisfy.
 */
export type ServiceAuthPool = pg.Pool;

/** IDs and session tokens as Better Auth makes them: 32 characters of [A-Za-z0-9] (~190 bits). */
export function newId(): string {
  return randomAlphanumeric(32);
}

/** A tenant database handle: a pool (the sign-in service's TenantDb) or one connected client (the gateway's, or a transaction's). */
export type UserAdminDb = pg.Pool | pg.ClientBase;

/** `work` inside BEGIN … COMMIT on one connection of `db` (a pool: a connection taken and given back; a client: used as it is); ROLLBACK on any error. */
export async function inTransaction<T>(db: UserAdminDb, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const pooled = 'totalCount' in db;
  const client = pooled ? await (db as pg.Pool).connect() : (db as pg.ClientBase);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    if (pooled) (client as pg.PoolClient).release();
  }
}
