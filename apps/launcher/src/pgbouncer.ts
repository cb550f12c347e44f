import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chown, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { writePoolerFiles, type PooledDatabase } from '@slipway/sign-in-core';
import { aptCommand, aptInstall, onPath } from './apt.js';
import { StartupError, oneLine } from './errors.js';
import { log } from './log.js';
import { isPortFree } from './ports.js';
import { ensurePrivateDir, ensureSecretFile } from './private-files.js';
import { POOLER_ADMIN_USER, pgbouncerIni, type PoolerLimits } from './pgbouncer-conf.js';

export interface PgbouncerHandle {
  /** What applications' DATABASE_URL names: `postgresql://127.0.0.1:<port>` (their own role and database added). */
  url: string;
  /** The admin console (RELOAD), with its password. */
  adminUrl: string;
  /** Where auth_file and the databases live (0700). */
  dir: string;
  readonly pid?: number;
  stop(): Promise<void>;
}

export interface PgbouncerOptions extends PoolerLimits {
  port: number;
  /** The Postgres server holding the applications' databases. */
  server: { host: string; port: number };
  /** Every application database there is now (later ones are added by the gateway when provisioned). */
  databases: PooledDatabase[];
  onRestart(): Promise<void>;
  onCrashLoop(line: string): void;
}

const INSTALL = aptCommand(['pgbouncer']);

/**
 * PgBouncer stands between applications and Postgres (they never reach Postgres's port). As root
 * on Debian/Ubuntu it is installed from apt when missing (its own service is not started);
 * otherwise `pnpm start` stops with one line naming the command. There is no switch to run
 * without it: an application's database would then be reachable only by reaching Postgres.
 */
export async function pgbouncerPreflight(): Promise<string> {
  const found = () => spawnSync('sh', ['-c', 'command -v pgbouncer || ls /usr/sbin/pgbouncer'], { encoding: 'utf8' }).stdout.trim().split('\n')[0] ?? '';
  if (found()) return found();
  if (process.getuid?.() !== 0 || !onPath('apt-get')) {
    throw new StartupError(`applications reach their databases through PgBouncer, which is not installed: run \`sudo ${INSTALL}\``);
  }
  log('launcher', `installing PgBouncer (applications reach their databases through it): apt-get update && ${INSTALL}`);
  const ok = await aptInstall(['pgbouncer'], { noServiceStart: true });
  if (!ok || !found()) throw new StartupError(`could not install PgBouncer: run \`${INSTALL}\` yourself`);
  log('launcher', 'installed pgbouncer');
  return found();
}

/** PgBouncer refuses to run as root: as root it runs as `postgres` (the Debian package's user, also embedded Postgres's). */
function runAs(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0)
    throw new StartupError(
      'PgBouncer must not run as root and there is no `postgres` user to run it as: install the pgbouncer package (it creates one), or run `pnpm start` as an ordinary user',
    );
  return { name: 'postgres', uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/**
 * Runs PgBouncer on `127.0.0.1:<port>` in front of the applications' databases: its files under
 * `<home>/pgbouncer` (0700), restarted with backoff when it exits unexpectedly (more than 5 exits
 * within a minute is a crash loop, as for every other process).
 */
export async function startPgbouncer(home: string, binary: string, options: PgbouncerOptions): Promise<PgbouncerHandle> {
  const dir = join(home, 'pgbouncer');
  await ensurePrivateDir(dir);
  const password = await ensureSecretFile(join(dir, 'admin-password'), 24);
  const user = runAs();
  if (user) await chown(dir, user.uid, user.gid);
  await stopLeftover(dir);
  if (!(await isPortFree(options.port))) throw new StartupError(`port ${options.port} for PgBouncer is taken; set SLIPWAY_PGBOUNCER_PORT to a free port`);
  const adminUrl = `postgresql://${POOLER_ADMIN_USER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/pgbouncer`;
  await writePoolerFiles({ dir, adminUrl, server: options.server }, options.databases);
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(ini, pgbouncerIni(dir, options.port, options), { mode: 0o600 });
  if (user) await chown(ini, user.uid, user.gid);
  const args = [...(user ? ['-u', user.name] : []), ini];
  // Detached, as the launcher's Redis: Ctrl-C reaches it only through the launcher (SIGINT would be
  // PgBouncer's "safe shutdown", waiting for every client to leave).
  const launch = () => spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const first = launch();
  const output = collect(first);
  const failure = await waitUntilAnswering(first, adminUrl);
  if (failure) {
    first.kill('SIGKILL');
    throw new StartupError(`PgBouncer did not start on 127.0.0.1:${options.port} (${output() || failure}); set SLIPWAY_DEBUG=1 to see its log`);
  }
  log(
    'launcher',
    `PgBouncer on 127.0.0.1:${options.port} in front of the applications' databases (${options.databases.length} now; ${options.poolSize} server connections each at most)`,
  );
  return supervise(first, launch, adminUrl, dir, options);
}

function supervise(first: ChildProcess, launch: () => ChildProcess, adminUrl: string, dir: string, options: PgbouncerOptions): PgbouncerHandle {
  let child = first;
  let stopping = false;
  const crashes: number[] = [];
  const watch = (current: ChildProcess) =>
    current.once('exit', (code, signal) => {
      if (stopping || current !== child) return;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && now - crashes[0]! > 60_000) crashes.shift();
      const reason = signal ?? `code ${code}`;
      if (crashes.length > 5)
        return options.onCrashLoop(`pgbouncer crashed ${crashes.length} times within 60 s (last: ${reason}); not restarting it again: stopping everything`);
      const delay = Math.min(100 * 2 ** (crashes.length - 1), 5000);
      log('launcher', `pgbouncer exited unexpectedly (${reason}); restarting in ${delay} ms`);
      setTimeout(() => void restart(now), delay);
    });
  const restart = async (downSince: number) => {
    if (stopping) return;
    const next = launch();
    const output = collect(next);
    child = next;
    watch(next);
    const published = options.onRestart();
    const failure = await waitUntilAnswering(next, adminUrl);
    await published;
    if (failure) log('launcher', `pgbouncer did not come back (${output() || failure})`);
    else log('launcher', `pgbouncer is back (pid ${next.pid}): answering ${((Date.now() - downSince) / 1000).toFixed(1)} s after it went down`);
  };
  watch(first);
  return {
    url: `postgresql://127.0.0.1:${options.port}`,
    adminUrl,
    dir,
    get pid() {
      return child.pid;
    },
    stop: () => {
      stopping = true;
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}

/** Waits up to 10 s for the admin console to answer; returns why it failed, or undefined. */
async function waitUntilAnswering(child: ChildProcess, adminUrl: string): Promise<string | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SHOW VERSION');
      return undefined;
    } catch (error) {
      if (child.exitCode !== null || child.signalCode !== null) return `exited with ${child.signalCode ?? `code ${child.exitCode}`}`;
      if (Date.now() > deadline) return oneLine(error);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** A launcher killed with SIGKILL leaves its PgBouncer running: the one named by our pid file is stopped. */
async function stopLeftover(dir: string): Promise<void> {
  const pid = Number((await readFile(join(dir, 'pgbouncer.pid'), 'utf8').catch(() => '')).trim());
  if (!pid) return;
  const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  if (comm.trim() !== 'pgbouncer') return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (!(await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => ''))) {
      log('launcher', `stopped the PgBouncer an earlier launcher left running (pid ${pid})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new StartupError(`the PgBouncer an earlier launcher left running (pid ${pid}) does not stop; stop it, then start again`);
}

/** Its last lines, for error messages (all of them with SLIPWAY_DEBUG). */
function collect(child: ChildProcess): () => string {
  const tail: string[] = [];
  const debug = Boolean(process.env['SLIPWAY_DEBUG']);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = chunk.split('\n').filter((l) => l.trim());
      tail.push(...lines);
      tail.splice(0, Math.max(0, tail.length - 20));
      if (debug) for (const line of lines) log('pgbouncer', line);
    });
  }
  return () => tail.at(-1) ?? '';
}
