import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { decryptEnvelopeToString, envelopeBinding, type Keyring } from '@slipway/crypto';
import { roleScramSecret } from './scram-secret.js';

/** Where the platform's PgBouncer reads what changes with the applications, and how to tell it. */
export interface PoolerSettings {
  /** The 0700 directory holding `users.txt` (auth_file) and `databases.ini` (included by pgbouncer.ini). */
  dir: string;
  /** The admin console, `postgresql://<admin>:<password>@127.0.0.1:<port>/pgbouncer` (RELOAD). */
  adminUrl: string;
  /** The Postgres server holding the applications' databases (host and port PgBouncer connects to). */
  server: { host: string; port: number };
}

/** One application's database as PgBouncer must know it (the password decrypted, in memory only). */
export interface PooledDatabase {
  databaseName: string;
  roleName: string;
  password: string;
}

export const POOLER_AUTH_FILE = 'users.txt';
export const POOLER_DATABASES_FILE = 'databases.ini';

export class PoolerSyncError extends Error {
  override readonly name = 'PoolerSyncError';
}

/** `"name" "secret"` with embedded quotes doubled (PgBouncer's auth_file format). */
function authLine(name: string, secret: string): string {
  return `"${name.replace(/"/g, '""')}" "${secret.replace(/"/g, '""')}"`;
}

/** Only names provisioning makes (`app_<hex>`) reach PgBouncer's configuration: nothing to escape. */
function safeName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new PoolerSyncError(`refusing to give PgBouncer the database or role name ${JSON.stringify(name.slice(0, 80))}`);
  return name;
}

/**
 * auth_file: the admin console's user and every application role, each with its SCRAM secret
 * (the one the role has on the server, so PgBouncer can log in with what the client proved).
 */
export function poolerAuthFile(databases: PooledDatabase[], adminUrl: string): string {
  const admin = new URL(adminUrl);
  const adminUser = decodeURIComponent(admin.username);
  const lines = [authLine(safeName(adminUser), roleScramSecret(adminUser, decodeURIComponent(admin.password)))];
  for (const db of databases) lines.push(authLine(safeName(db.roleName), roleScramSecret(db.roleName, db.password)));
  return `${lines.join('\n')}\n`;
}

/**
 * `[databases]`: one entry per application database, nothing else (no `*` fallback: a name that
 * is not an application's database is refused by PgBouncer without a server connection). No
 * `user=`: PgBouncer logs in as the client's own role, so the server's per-role CONNECTION LIMIT
 * and database privileges apply as well.
 */
export function poolerDatabasesFile(databases: PooledDatabase[], server: { host: string; port: number }): string {
  const lines = ['[databases]'];
  for (const db of databases) lines.push(`${safeName(db.databaseName)} = host=${server.host} port=${server.port} dbname=${safeName(db.databaseName)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Replaces `file`, 0600 from its first byte and owned by whoever owns the directory (PgBouncer
 * runs as its own user, `postgres`, when the platform runs as root; the writer may be root).
 */
async function writePrivate(file: string, text: string, owner: { uid: number; gid: number }): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    if (process.getuid?.() === 0) await chown(temporary, owner.uid, owner.gid);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Writes PgBouncer's auth_file and databases (0600 files in a 0700 directory), without reloading. */
export async function writePoolerFiles(settings: PoolerSettings, databases: PooledDatabase[]): Promise<void> {
  await mkdir(settings.dir, { recursive: true, mode: 0o700 });
  await chmod(settings.dir, 0o700);
  const owner = await stat(settings.dir);
  await writePrivate(join(settings.dir, POOLER_AUTH_FILE), poolerAuthFile(databases, settings.adminUrl), owner);
  await writePrivate(join(settings.dir, POOLER_DATABASES_FILE), poolerDatabasesFile(databases, settings.server), owner);
}

/** `RELOAD` over PgBouncer's admin console: it re-reads its configuration and auth_file. */
export async function reloadPooler(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('RELOAD');
  } catch (error) {
    throw new PoolerSyncError(`could not reload PgBouncer: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes PgBouncer know exactly these application databases: files written, then RELOAD. Throws
 * PoolerSyncError when PgBouncer cannot be told (the caller fails: an application whose
 * database PgBouncer does not know could not reach it).
 */
export async function syncPooler(settings: PoolerSettings, databases: PooledDatabase[]): Promise<void> {
  await writePoolerFiles(settings, databases);
  await reloadPooler(settings.adminUrl);
}

/** The application databases' rows with their passwords decrypted (in memory only), for PgBouncer and the back-fill. */
export function pooledDatabases(
  keyring: Keyring,
  rows: { applicationId: string; databaseName: string; roleName: string; password: Uint8Array }[],
): PooledDatabase[] {
  return rows.map((row) => ({
    databaseName: row.databaseName,
    roleName: row.roleName,
    password: decryptEnvelopeToString(keyring, row.password, envelopeBinding.databasePassword(row.applicationId)),
  }));
}

/** What the pooler's sync needs of the platform database (libs/platform-data's ApplicationDatabases). */
export interface PooledDatabasesSource {
  listAll(): Promise<{ applicationId: string; databaseName: string; roleName: string; password: Uint8Array }[]>;
  withPoolerLock<T>(fn: () => Promise<T>): Promise<T>;
}

/** After provisioning: PgBouncer is told every application database there is (serialised across processes). */
export function syncPoolerWithPlatform(settings: PoolerSettings, source: PooledDatabasesSource, keyring: Keyring): Promise<void> {
  return source.withPoolerLock(async () => syncPooler(settings, pooledDatabases(keyring, await source.listAll())));
}
