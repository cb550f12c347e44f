import { enforceApplicationRoles, pooledDatabases, type PooledDatabase } from '@slipway/sign-in-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import { openPlatformData } from '@slipway/platform-data';
import { log } from './log.js';

/**
 * Before PgBouncer starts: every application database there is, its role brought up to date (the
 * back-fill for roles made before: CONNECTION LIMIT, and the SCRAM secret PgBouncer also holds).
 * Runs at every start; idempotent.
 */
export async function prepareApplicationDatabases(
  platformUrl: string,
  adminUrl: string,
  masterKey: string,
  connectionLimit: number,
): Promise<PooledDatabase[]> {
  const platform = openPlatformData({ DATABASE_URL: platformUrl }, { poolSize: 1 });
  try {
    const databases = pooledDatabases(keyringFromMasterKey(masterKey), await platform.applications.databases.listAll());
    await enforceApplicationRoles(adminUrl, databases, connectionLimit);
    if (databases.length)
      log('launcher', `${databases.length} application database role(s): CONNECTION LIMIT ${connectionLimit}, reachable through PgBouncer only`);
    return databases;
  } finally {
    await platform.close();
  }
}
