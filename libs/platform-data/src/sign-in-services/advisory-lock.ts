import pg from 'pg';
import type { PlatformInfrastructure } from '../infrastructure.js';

/**
 * Runs `fn` holding a session advisory lock on `hashtext(namespace || key)` of the platform
 * database, on a connection of its own: `fn` may run for seconds (creating a database) and query
 * through the pool meanwhile, so holding one of the pool's connections could starve it.
 */
export async function withAdvisoryLock<T>(platform: PlatformInfrastructure, namespace: string, key: string, fn: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: platform.pool.options.connectionString });
  await client.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(hashtext($1::text || $2::text))`, [namespace, key]);
    return await fn();
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext($1::text || $2::text))`, [namespace, key]).catch(() => undefined);
    await client.end();
  }
}
