// bench/backups: backup and restore of a platform with 50 applications (issue 31: "`pnpm bench`
// prints backup and restore time and size for a platform with 50 applications"). The built
// platform is launched as `pnpm start` runs it (embedded Postgres, temp SLIPWAY_HOME, free ports),
// 50 owners each get an application (`slipway admin bootstrap`) with sign-in on (`slipway auth
// enable`: a database of its own) and USERS end users signed up. Then, RUNS times, interleaved:
//   - `slipway admin backup --json` (the whole platform in one sealed file): wall time, file size;
//   - `slipway admin restore <file> --home <fresh dir> --json`: wall time (the dir is removed);
//   - `slipway db restore --to <1 s after the users were created> --yes --json` of ONE
//     application's database, in place, through the owners' API: wall time from the call to
//     `succeeded` (the launcher's backup service claims restores on its 5 s tick; the restore's
//     own run, started → finished, is reported beside); the restored users are counted;
//   - the peer, what an operator does by hand without Slipway: `tar -C <home>/pg/data -cf - . |
//     gzip -3 > file` (a copy of the live data directory: unencrypted, not consistent, pg_wal
//     included) and `tar -xzf` of it into a fresh dir.
// Also the base backups' sizes: the scheduled one the launcher takes at start (no applications
// yet, from its log line) and the ones inside `admin backup` (same code, 50 applications, from
// the catalogue). Medians over RUNS; the load average is printed beside.
// Run: pnpm nx run-many -t build --projects=tag:type:app,launcher && node bench/backups/run.mjs
// Env: APPS (50), USERS (20; BENCH_QUICK=1: 5), RUNS (3; BENCH_QUICK=1: 1), CONCURRENCY (4: CLI
// calls and sign-ups at a time), BENCH_TIMEOUT_MINUTES (60: everything is killed after it),
// BENCH_RESULT_FILE (figures as JSON, for `pnpm bench`).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pg = createRequire(join(ROOT, 'libs/backup/package.json'))('pg');
const LAUNCHER = join(ROOT, 'apps/launcher/dist/main.js');
const CLI = join(ROOT, 'apps/cli/dist/main.js');
const QUICK = process.env.BENCH_QUICK === '1';
const APPS = Number(process.env.APPS ?? 50);
const USERS = Number(process.env.USERS ?? (QUICK ? 5 : 20));
const RUNS = Number(process.env.RUNS ?? (QUICK ? 1 : 3));
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MINUTES ?? 60) * 60_000;
const MB = 1024 * 1024;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const loads = [];
const sampleLoad = () => loads.push(loadavg()[0]);

/** A port nothing listens on, below the ephemeral range (as libs/testing's freePort). */
const handedOut = new Set();
async function freePort() {
  for (let i = 0; i < 200; i++) {
    const port = 15_000 + Math.floor(Math.random() * 17_000);
    if (handedOut.has(port)) continue;
    const free = await new Promise((resolve) => {
      const server = createServer().unref();
      server.once('error', () => resolve(false));
      server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
    });
    if (!free) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port between 15000 and 32000 after 200 tries');
}

/** The process groups of the commands running now (a CLI and what it started: tar, a restore's server). */
const runningGroups = new Set();
const killGroup = (pid) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone
  }
};

/** Runs a command to its end in its own process group (SIGKILL to the group after timeoutMs); resolves with its code, output and wall time. */
function run(command, args, { env = process.env, timeoutMs, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    runningGroups.add(child.pid);
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += `\n(killed: no result within ${timeoutMs} ms)`;
      killGroup(child.pid);
    }, timeoutMs);
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', (error) => {
      clearTimeout(timer);
      runningGroups.delete(child.pid);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      runningGroups.delete(child.pid);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** `fn` over `items`, `limit` at a time. */
async function inPool(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i], i);
      }
    }),
  );
  return results;
}

// ---- the platform -------------------------------------------------------------------------------
const work = await mkdtemp(join(tmpdir(), 'slipway-bench-backups-'));
await chmod(work, 0o755); // the embedded server (and the restores' servers) run as `postgres`
const home = join(work, 'home');
await mkdir(home, { mode: 0o755 });
await chmod(home, 0o755); // as `pnpm start` makes .slipway
const files = join(work, 'files');
await mkdir(files, { mode: 0o700 });
const [gateway, auth, edge, worker, postgres, pgbouncer] = [
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
];
const OUTWARD = ['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];
const launcherEnv = {
  ...Object.fromEntries(OUTWARD.filter((name) => process.env[name]).map((name) => [name, process.env[name]])),
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  SLIPWAY_HOME: home,
  SLIPWAY_PG_PORT: String(postgres),
  QUEUE_PREFIX: `slipway-bench-backups-${process.pid}`,
  GATEWAY_PORT: String(gateway),
  AUTH_PORT: String(auth),
  EDGE_PORT: String(edge),
  BUILD_WORKER_PORT: String(worker),
  SLIPWAY_PGBOUNCER_PORT: String(pgbouncer),
  PUBLIC_URL: `http://localhost:${gateway}`,
  AUTH_PUBLIC_URL: `http://localhost:${auth}`,
  APPS_DOMAIN: `localhost:${edge}`,
  // Every end user signs up from this one address: the per-address sign-up limit (9 / 10 s) raised.
  AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000',
};
const launcher = spawn(process.execPath, [LAUNCHER], { cwd: ROOT, env: launcherEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
let launcherOutput = '';
launcher.stdout.on('data', (c) => (launcherOutput += c));
launcher.stderr.on('data', (c) => (launcherOutput += c));
const launcherExited = new Promise((resolve) => launcher.on('exit', (code, signal) => resolve({ code, signal })));
let launcherGone = false;
void launcherExited.then(() => (launcherGone = true));

/** Whether `pid` is still one of this platform's processes (its command line or environment names the home), not a reused pid. */
function ours(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(home) || readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SLIPWAY_HOME=${home}`);
  } catch {
    return false;
  }
}

/**
 * SIGKILL to every process of this platform still there, each with its group (services, Redis,
 * Postgres, PgBouncer, nginx: each in a group of its own), and to the commands running now:
 * what a Ctrl-C that hangs, or an exit half-way, leaves. Found by the home in their command line
 * or environment, so nothing of another platform on the machine is touched.
 */
function killEverything() {
  for (const pid of runningGroups) killGroup(pid);
  if (!launcherGone) killGroup(launcher.pid);
  const mine = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map(Number)
    .filter(ours);
  for (const pid of mine) {
    killGroup(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
process.on('exit', () => {
  killEverything();
  rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
const watchdog = setTimeout(() => {
  console.error(`bench/backups: no result within ${TIMEOUT_MS / 60_000} min; killing everything`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

async function waitForLauncher(pattern, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(launcherOutput);
    if (match) return match;
    if (launcherGone) throw new Error(`the launcher exited before ${what}:\n${launcherOutput.slice(-4000)}`);
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}:\n${launcherOutput.slice(-4000)}`);
    await sleep(200);
  }
}

async function stopPlatform() {
  if (!launcherGone) {
    try {
      process.kill(-launcher.pid, 'SIGINT'); // Ctrl-C, as an operator stops `pnpm start`
    } catch {
      // gone
    }
    await Promise.race([launcherExited, sleep(60_000)]);
  }
  killEverything(); // whatever the stop left (nothing, normally)
  await rm(work, { recursive: true, force: true }).catch(() => undefined);
}

const cliEnv = (extra = {}) => ({
  PATH: process.env.PATH,
  SLIPWAY_HOME: home,
  SLIPWAY_URL: `http://127.0.0.1:${gateway}`,
  SLIPWAY_POLL_INTERVAL_MS: '200',
  NO_COLOR: '1',
  ...extra,
});
async function cli(args, extra = {}, timeoutMs = 120_000) {
  const result = await run(process.execPath, [CLI, ...args], { env: cliEnv(extra), timeoutMs });
  if (result.code !== 0) throw new Error(`slipway ${args.join(' ')}: exit ${result.code}\n${result.stdout.slice(0, 2000)}\n${result.stderr.slice(-2000)}`);
  return { ...result, json: JSON.parse(result.stdout) };
}

async function sql(database, text, params = []) {
  const runtime = JSON.parse(await readFile(join(home, 'runtime.json'), 'utf8'));
  const url = new URL(runtime.databaseUrl);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 10_000, query_timeout: 60_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function signUp(account, email) {
  const response = await fetch(`http://127.0.0.1:${auth}/a/${account.slug}/sign-up/email`, {
    method: 'POST',
    headers: { origin: `http://${account.slug}.localhost:${edge}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'a long passphrase', name: 'Visitor' }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) throw new Error(`sign-up ${email} on ${account.slug}: ${response.status} ${(await response.text()).slice(0, 300)}`);
}

const duSize = async (dir) => Number((await run('du', ['-sb', dir], { timeoutMs: 120_000 })).stdout.split('\t')[0]);

const figures = {};
const rounds = [];
const setup = {};
try {
  const launchStarted = performance.now();
  await waitForLauncher(/Slipway is ready/, 300_000, 'Slipway is ready');
  setup.launchMs = performance.now() - launchStarted;
  // The scheduled base backup the launcher takes at start (no base backup yet): an empty platform.
  const [, startBase] = await waitForLauncher(/base backup [0-9a-f-]+: ([\d.]+) MB in [\d.]+ s/, 300_000, "the launcher's first base backup");
  figures.scheduledBaseAtStartBytes = Number(startBase) * MB;
  const masterKey = (await readFile(join(home, 'master.key'), 'utf8')).trim();
  console.log(
    `platform ready in ${(setup.launchMs / 1000).toFixed(1)} s (home ${home}); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  // ---- 50 applications, sign-in on, USERS end users each -------------------------------------
  let t = performance.now();
  const tag = process.pid.toString(36);
  setup.bootstrapRetries = 0;
  const accounts = await inPool([...Array(APPS).keys()], CONCURRENCY, async (i) => {
    for (let attempt = 1; ; attempt++) {
      try {
        // SLIPWAY_DEBUG: the whole error (the CLI prints only the first line of one it does not know, empty for Prisma's).
        return (
          await cli(['admin', 'bootstrap', '--email', `owner-${i}-${tag}@bench.test`, '--app', `bench-${i}-${tag}`, '--plan', 'pro', '--json'], {
            SLIPWAY_DEBUG: '1',
          })
        ).json;
      } catch (error) {
        // Under load the CLI's one-connection pool may not start its transaction within Prisma's
        // 2 s ("Unable to start a transaction in the given time": 3 of 4 concurrent bootstraps at
        // load average 22), or its serializable transaction may conflict with another bootstrap.
        // Bootstrap is idempotent (owner by email, application by name): again, and say so.
        if (attempt >= 5) throw error;
        const why = error.message
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line && !line.startsWith('at ') && !/^slipway:\s*$/.test(line) && !line.startsWith('slipway admin bootstrap'));
        console.log(`bootstrap ${i}, attempt ${attempt}: ${why.join(' ').slice(0, 300) || 'failed'}; again`);
        setup.bootstrapRetries++;
      }
    }
  });
  setup.bootstrapMs = performance.now() - t;
  t = performance.now();
  await inPool(accounts, CONCURRENCY, (account) =>
    cli(['auth', 'enable', '--json'], { SLIPWAY_TOKEN: account.ownerToken, SLIPWAY_APPLICATION_ID: account.applicationId }),
  );
  setup.authEnableMs = performance.now() - t;
  t = performance.now();
  const users = accounts.flatMap((account, a) => Array.from({ length: USERS }, (_, u) => ({ account, email: `user-${a}-${u}@bench.test` })));
  await inPool(users, CONCURRENCY, ({ account, email }) => signUp(account, email));
  setup.signUpMs = performance.now() - t;
  console.log(
    `${APPS} applications in ${(setup.bootstrapMs / 1000).toFixed(1)} s, sign-in on in ${(setup.authEnableMs / 1000).toFixed(1)} s, ${users.length} end users in ${(setup.signUpMs / 1000).toFixed(1)} s; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  // The point-in-time target: 1 s after the users were created; one more user after it, for the restore to undo.
  const target = new Date(Date.now() + 1000);
  await sleep(1500);
  const victim = accounts[0];
  await signUp(victim, `after-target-${tag}@bench.test`);
  const [{ database_name: victimDb }] = await sql(null, 'SELECT database_name FROM application_databases WHERE application_id = $1', [victim.applicationId]);
  const countUsers = async () => Number((await sql(victimDb, 'SELECT count(*)::int AS n FROM service_auth.users'))[0].n);
  figures.victimUsersBeforeRestore = await countUsers();
  figures.dataDirBytes = await duSize(join(home, 'pg/data'));
  figures.pgWalBytes = await duSize(join(home, 'pg/data/pg_wal'));

  // ---- RUNS rounds, ours and the peer interleaved ------------------------------------------------
  for (let round = 1; round <= RUNS; round++) {
    const r = {};
    const file = join(files, `platform-${round}.backup`);
    const backup = await cli(['admin', 'backup', '--out', file, '--json'], {}, 30 * 60_000);
    r.backupMs = backup.ms;
    r.backupInsideMs = backup.json.durationMs; // without the CLI's own start (node, imports)
    r.backupBytes = (await stat(file)).size;
    r.backupApplications = backup.json.applications;
    const [base] = await sql(null, "SELECT size_bytes::text AS size FROM backups WHERE kind = 'base' AND id = $1", [backup.json.backupId]);
    r.baseBytes = Number(base?.size);
    sampleLoad();

    const peerFile = join(files, `peer-${round}.tar.gz`);
    const peer = await run('bash', ['-c', 'set -o pipefail; tar -C "$1" -cf - . | gzip -3 > "$2"', 'peer-backup', join(home, 'pg/data'), peerFile], {
      timeoutMs: 30 * 60_000,
    });
    // tar exits 1 when files changed while it read them: expected of a live data directory.
    if (peer.code !== 0 && peer.code !== 1) throw new Error(`peer backup: exit ${peer.code}: ${peer.stderr.slice(-1000)}`);
    r.peerBackupMs = peer.ms;
    r.peerBackupBytes = (await stat(peerFile)).size;
    sampleLoad();

    const restoreHome = join(work, `restore-${round}`);
    const restore = await cli(['admin', 'restore', file, '--home', restoreHome, '--json'], { SLIPWAY_MASTER_KEY: masterKey }, 30 * 60_000);
    r.restoreMs = restore.ms;
    r.restoreInsideMs = restore.json.durationMs;
    r.restoreApplications = restore.json.applications;
    await rm(restoreHome, { recursive: true, force: true });
    await rm(file, { force: true });
    sampleLoad();

    const peerDir = join(work, `peer-restore-${round}`);
    await mkdir(peerDir);
    const untar = await run('tar', ['-xzf', peerFile, '-C', peerDir], { timeoutMs: 30 * 60_000 });
    if (untar.code !== 0) throw new Error(`peer restore: exit ${untar.code}: ${untar.stderr.slice(-1000)}`);
    r.peerRestoreMs = untar.ms;
    await rm(peerDir, { recursive: true, force: true });
    await rm(peerFile, { force: true });
    sampleLoad();

    // What a point-in-time restore fetches: every WAL file archived since the base backup's start, up to now.
    const [wal] = await sql(null, 'SELECT count(*)::int AS files, coalesce(sum(size_bytes), 0)::text AS bytes FROM backup_wal');
    r.walArchivedFiles = wal.files;
    r.walArchivedBytes = Number(wal.bytes);
    const pitr = await cli(
      ['db', 'restore', '--to', target.toISOString(), '--yes', '--json'],
      { SLIPWAY_TOKEN: victim.ownerToken, SLIPWAY_APPLICATION_ID: victim.applicationId },
      30 * 60_000,
    );
    if (pitr.json.status !== 'succeeded') throw new Error(`point-in-time restore: ${pitr.stdout.slice(0, 2000)}`);
    r.pitrMs = pitr.ms;
    const [row] = await sql(
      null,
      'SELECT extract(epoch FROM started_at - created_at) * 1000 AS queued, extract(epoch FROM finished_at - started_at) * 1000 AS ran, size_bytes::text AS size FROM database_restores WHERE id = $1',
      [pitr.json.id],
    );
    r.pitrQueuedMs = Number(row.queued);
    r.pitrRunMs = Number(row.ran);
    r.pitrDatabaseBytes = Number(row.size);
    r.pitrUsers = await countUsers();
    if (r.pitrUsers !== USERS)
      throw new Error(`after the point-in-time restore the application has ${r.pitrUsers} end users, not the ${USERS} it had at ${target.toISOString()}`);
    sampleLoad();
    rounds.push(r);
    console.log(
      `round ${round}/${RUNS}: ${JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)])))}; load ${loadavg()[0].toFixed(2)}`,
    );
  }
  for (const key of Object.keys(rounds[0])) figures[key] = median(rounds.map((r) => r[key]));
} catch (error) {
  console.error(`bench/backups failed: ${error.stack ?? error}`);
  console.error(
    launcherOutput
      .split('\n')
      .filter((line) => /backup|launcher|FAILED|error/i.test(line))
      .slice(-40)
      .join('\n'),
  );
  await stopPlatform();
  process.exit(1);
}
// The backup service's own account: each base backup, each restore's start and end, failures.
const backupLines = launcherOutput
  .split('\n')
  .filter((line) => /^backup\s*\|/.test(line) && /base backup [0-9a-f-]+:|: starting from|: done in|FAILED|retention/.test(line));
await stopPlatform();

// ---- the table ------------------------------------------------------------------------------------
Object.assign(figures, {
  apps: APPS,
  usersPerApp: USERS,
  runs: RUNS,
  ...Object.fromEntries(Object.entries(setup).map(([k, v]) => [`setup.${k}`, v])),
  loadMin: Math.min(...loads),
  loadMax: Math.max(...loads),
  loadEnd: loadavg()[0],
});
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;
const ratio = (ours, theirs) => `${(theirs / ours).toFixed(2)}×`;
const f = figures;
console.log("\nthe backup service's lines:");
for (const line of backupLines.slice(-40)) console.log(`  ${line.slice(0, 300)}`);
console.log(
  `\nbackups: ${APPS} applications with sign-in on, ${USERS} end users each; medians of ${RUNS} round(s) (ours and the peer interleaved); ${process.version}, ${cpus().length} cores; load average (1 min) ${f.loadMin.toFixed(2)}–${f.loadMax.toFixed(2)} during the rounds, ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
console.log(
  `data directory ${mb(f.dataDirBytes)} (pg_wal ${mb(f.pgWalBytes)}); setup: ${APPS} bootstraps ${s(setup.bootstrapMs)} (${setup.bootstrapRetries} retried), auth enable ${s(setup.authEnableMs)}, ${APPS * USERS} sign-ups ${s(setup.signUpMs)}\n`,
);
console.log('| what | slipway | peer: tar + gzip -3 of the live data directory, by hand | peer ÷ slipway (above 1: slipway better) |');
console.log('|---|---|---|---|');
console.log(
  `| backup time (\`slipway admin backup\`: base backup, WAL, blobs, sealed) | ${s(f.backupMs)} (${s(f.backupInsideMs)} after the CLI started) | ${s(f.peerBackupMs)} (not consistent, not encrypted) | ${ratio(f.backupMs, f.peerBackupMs)} |`,
);
console.log(`| backup size | ${mb(f.backupBytes)} | ${mb(f.peerBackupBytes)} (pg_wal included) | ${ratio(f.backupBytes, f.peerBackupBytes)} |`);
console.log(
  `| restore time (\`slipway admin restore\` into a fresh home: checked, unpacked, WAL replayed) | ${s(f.restoreMs)} (${s(f.restoreInsideMs)} after the CLI started) | ${s(f.peerRestoreMs)} (\`tar -xzf\`) | ${ratio(f.restoreMs, f.peerRestoreMs)} |`,
);
console.log(
  `| point-in-time restore of one application's database, in place (\`slipway db restore\`, call → succeeded) | ${s(f.pitrMs)} (queued ${s(f.pitrQueuedMs)}, ran ${s(f.pitrRunMs)}; ${f.walArchivedFiles} WAL files archived, ${mb(f.walArchivedBytes)} sealed; ${f.pitrUsers} of ${f.victimUsersBeforeRestore} users back, as at the target) | — | |`,
);
console.log(`| base backup inside \`admin backup\` (same code as the scheduled one), ${APPS} applications | ${mb(f.baseBytes)} | | |`);
console.log(`| scheduled base backup at start (no applications yet) | ${mb(f.scheduledBaseAtStartBytes)} | | |`);
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({ ...figures, rounds }));
process.exit(0);
