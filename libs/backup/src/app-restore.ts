import { randomBytes } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import pg from 'pg';
import { quoteIdent, withDatabase } from '@slipway/platform-schema';
import { archiveNow } from './base-backup.js';
import { copyDatabase } from './copy-database.js';
import { backupLayout, scratchDir } from './layout.js';
import type { PostgresBinaries } from './postgres-binaries.js';
import { recoverServer, removeDir } from './recovery.js';
import { shipWal, type WalArchive } from './wal-archive.js';
import { pgClient } from './pg-client.js';

export class RestoreRefusedError extends Error {
  override readonly name = 'RestoreRefusedError';
}

export interface AppRestoreOptions extends WalArchive {
  home: string;
  /** Superuser connection to the live server. */
  serverUrl: string;
  binaries: PostgresBinaries;
  database: { databaseName: string; roleName: string };
  target: Date;
  mode: 'in_place' | 'new';
  /** PgBouncer's admin console: an in-place restore pauses the database there while it swaps. */
  poolerAdminUrl?: string;
  onStep?: (step: string) => void;
}

export interface AppRestoreResult {
  /** The database that now holds the restored data (the application's own name, in place). */
  databaseName: string;
  /** In place: the database it replaced, kept for inspection. */
  keptDatabase: string | null;
  sizeBytes: number;
  rows: number;
  durationMs: number;
}

/**
 * Restores one application's database to a point in time: everything up to now archived, the
 * newest base backup before the target replayed to it in a scratch server, that database copied
 * into a new database of the live server (nothing live touched so far; a failure up to here
 * leaves only a dropped scratch), then either kept under a new name or swapped in (see swapIn):
 * the old one is renamed aside (kept), the new one takes its name. The application keeps its
 * DATABASE_URL; its open connections are closed once, new ones wait through the swap.
 */
export async function restoreApplicationDatabase(options: AppRestoreOptions, base: { id: string; walStart: string }): Promise<AppRestoreResult> {
  const started = Date.now();
  const step = (text: string) => options.onStep?.(text);
  if (options.target.getTime() > Date.now()) throw new RestoreRefusedError('the restore point is in the future');
  step('archiving the latest changes');
  await archiveNow(options.serverUrl);
  await shipWal(options.home, options);
  const stamp = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const dir = scratchDir(options.home, `${stamp}-${randomBytes(3).toString('hex')}`);
  // The scratch root traversable (the scratch server runs as `postgres` under root), each scratch its own.
  await mkdir(backupLayout.scratch(options.home), { recursive: true, mode: 0o711 });
  await chmod(backupLayout.scratch(options.home), 0o711);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const restoredName = `${options.database.databaseName}_r${stamp}`.slice(0, 63);
  let created = false;
  const admin = pgClient(withDatabase(options.serverUrl, 'postgres'), 'slipway-restore');
  await admin.connect();
  try {
    const scratch = await recoverServer({ ...options, base, dir, target: { time: options.target }, onStep: step });
    let rows = 0;
    try {
      const exists = await scratch.url('postgres');
      const probe = pgClient(exists);
      await probe.connect();
      const found = await probe.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database.databaseName]).finally(() => probe.end());
      if (!found.rowCount) throw new RestoreRefusedError(`the database did not exist yet at ${options.target.toISOString()}`);
      step('copying the database');
      await admin.query(`CREATE DATABASE ${quoteIdent(restoredName)} OWNER ${quoteIdent(options.database.roleName)}`);
      created = true;
      await admin.query(`REVOKE ALL ON DATABASE ${quoteIdent(restoredName)} FROM PUBLIC`);
      const copied = await copyDatabase(
        scratch.url(options.database.databaseName),
        withDatabase(options.serverUrl, restoredName),
        options.database.roleName,
        step,
      );
      rows = copied.rows;
    } finally {
      await scratch.stop();
    }
    let keptDatabase: string | null = null;
    let databaseName = restoredName;
    if (options.mode === 'in_place') {
      step('swapping the database in');
      keptDatabase = `${options.database.databaseName}_before_${stamp}`.slice(0, 63);
      await swapIn(admin, options.poolerAdminUrl, options.database.databaseName, restoredName, keptDatabase);
      databaseName = options.database.databaseName;
    }
    const size = await admin.query<{ size: string }>('SELECT pg_database_size($1)::text AS size', [databaseName]);
    return { databaseName, keptDatabase, sizeBytes: Number(size.rows[0]!.size), rows, durationMs: Date.now() - started };
  } catch (error) {
    if (created) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(restoredName)} WITH (FORCE)`).catch(() => undefined);
    throw error;
  } finally {
    await admin.end().catch(() => undefined);
    await removeDir(dir);
  }
}

/**
 * Renames `live` aside to `kept` and `restored` to `live`. PgBouncer (session pooling: a client
 * holds its server connection for its whole session, so PAUSE would wait for the app to
 * disconnect) KILLs the database's connections, which also holds new ones until RESUME: the app's
 * open connections are closed, new ones wait the moment of the swap, then reach the restored data.
 */
async function swapIn(admin: pg.Client, poolerAdminUrl: string | undefined, live: string, restored: string, kept: string): Promise<void> {
  const pooler = poolerAdminUrl ? new pg.Client({ connectionString: poolerAdminUrl, connectionTimeoutMillis: 5000 }) : undefined;
  pooler?.on('error', () => undefined);
  let held = false;
  try {
    if (pooler) {
      await pooler.connect();
      await withTimeout(pooler.query(`KILL ${poolerName(live)}`), 10_000, "PgBouncer did not close the database's connections within 10 s; try again");
      held = true;
    }
    // Connections that do not come through PgBouncer (the sign-in service's pool) end here; they reconnect by themselves.
    for (let attempt = 0; ; attempt++) {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [live]);
      try {
        await admin.query(`ALTER DATABASE ${quoteIdent(live)} RENAME TO ${quoteIdent(kept)}`);
        break;
      } catch (error) {
        if (attempt >= 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    try {
      await admin.query(`ALTER DATABASE ${quoteIdent(restored)} RENAME TO ${quoteIdent(live)}`);
    } catch (error) {
      await admin.query(`ALTER DATABASE ${quoteIdent(kept)} RENAME TO ${quoteIdent(live)}`).catch(() => undefined);
      throw error;
    }
  } finally {
    if (pooler) {
      if (held) await pooler.query(`RESUME ${poolerName(live)}`).catch(() => undefined);
      await pooler.end().catch(() => undefined);
    }
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new RestoreRefusedError(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** PgBouncer's console takes bare names; application database names are `[a-z0-9_]` (applicationDatabaseNames). */
function poolerName(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new RestoreRefusedError(`unexpected database name ${JSON.stringify(name)}`);
  return name;
}
