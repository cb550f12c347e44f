/**
 * Issue 28's acceptance run: the platform as `pnpm start` runs it, a deployed Node app under a
 * steady request loop (a new connection every 20 ms) and 4 end users signing up and reading their
 * sessions through the sign-in service, while every process of the platform is killed with
 * SIGKILL, one at a time: the build worker, each gateway process, each sign-in process, the edge,
 * Redis, an nginx worker, nginx's master (then a deploy: routes still change), the runtime
 * supervisor (the app's processes stay the same), and the embedded Postgres.
 *
 * For each kill it prints one line — failed app requests, failed sign-in requests, and the time
 * until the killed process is back and every /health/ready answers 200 again — and asserts: the
 * process is back by itself; 0 failed app requests; 0 failed session reads among those sent after
 * the kill (a request the killed process was serving at that instant is cut: no process answers
 * after kill -9; those are printed apart); the platform ready within 10 s of a Postgres kill. At
 * the end every acknowledged sign-up can still sign in, and Ctrl-C leaves nothing running.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { clock, LaunchedPlatform, RequestLoop, liveProcesses, processesNaming } from './support/launched.js';
import { formatSignInSummary, SignInLoop } from './support/sign-in-loop.js';
import type { Account } from './support/platform.js';

/** The issue's bound: every service ready again within 10 s of a kill of the embedded Postgres. */
const POSTGRES_READY_BOUND_MS = 10_000;
/** After a process is back, the loops run this much longer before the kill's window closes. */
const SETTLE_MS = 1500;
const SERVICES = ['gateway', 'auth-service', 'edge', 'build-worker'] as const;

interface Target {
  /** How the table names it. */
  label: string;
  /** The pid to kill. */
  pid: () => Promise<number>;
  /** Resolves true once a replacement of `killed` runs (the platform's own doing, not the test's). */
  back: (killed: number) => Promise<boolean>;
  /** Started right after the kill (e.g. an upload the killed process's sibling must accept); awaited after the measurement. */
  meanwhile?: () => Promise<void>;
}

interface Row {
  label: string;
  appFailed: number;
  appTotal: number;
  signIn: string;
  failedSessionReads: number;
  cutByKill: number;
  readyMs: number;
}

describe('fault: kill -9 of every process of pnpm start, one at a time, under app traffic and end users signing in', () => {
  let platform: LaunchedPlatform;
  let steady: Account;
  let other: Account;
  /** One application per gateway kill: each gets an upload right after its kill (two deploys of one application would collide). */
  const uploaders = new Map<string, Account>();
  let uploadSource: string;
  let loop: RequestLoop;
  let users: SignInLoop;
  let stateDir: string;
  let releases: string;
  const dirs: string[] = [];
  const rows: Row[] = [];

  const everyReady = async () => (await Promise.all(SERVICES.map((name) => platform.ready(name)))).every((status) => status === 200);
  const published = (name: string) => async () => platform.pid(name);
  /**
   * A new process named in runtime.json, and the launcher's own word that it is back (for a
   * service: it answers its /health/ready itself — a sibling answering on the shared socket is
   * not enough, or the next kill would hit the only process serving).
   */
  const announced =
    (name: string, logName = name) =>
    async (killed: number) => {
      const now = await platform.pid(name).catch(() => killed);
      return now !== killed && new RegExp(`launcher\\s+\\| ${logName} is back \\(pid ${now}\\)`).test(platform.log());
    };

  /** The nginx master this platform's pid file names (checked to be the nginx of its state directory). */
  const nginxMaster = async (): Promise<number> => {
    const pid = Number((await readFile(join(stateDir, 'nginx.pid'), 'utf8')).trim());
    const [master] = (await liveProcesses('nginx: master process')).filter((p) => p.pid === pid && p.title.includes(stateDir));
    if (!master) throw new Error(`no nginx master of ${stateDir} running (pid file: ${pid})`);
    return pid;
  };
  const nginxWorkers = async (master: number) => (await liveProcesses('nginx: worker process')).filter((p) => p.ppid === master);

  beforeAll(async () => {
    platform = await LaunchedPlatform.start('kill-each', {
      // Fast stall detection, so a killed build worker's job is handed on quickly.
      JOB_LOCK_MS: '3000',
      STALLED_INTERVAL_MS: '1500',
      // 4 clients on one address sign up and read sessions far more often than one person would:
      // the per-address limits are not what is measured here (nor bcrypt's cost).
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000',
      AUTH_RATE_LIMIT_SESSION_MAX: '1000000',
      AUTH_BCRYPT_COST: '4',
      // A mechanism switched off for a check, e.g. FAULTS_KILL_EACH_ENV='{"AUTH_DB_RESTART_WAIT_MS":"0"}'.
      ...(JSON.parse(process.env['FAULTS_KILL_EACH_ENV'] ?? '{}') as Record<string, string>),
    });
    stateDir = join(platform.home, 'runtime', 'nginx');
    releases = join(platform.home, 'runtime', 'releases');
    steady = await platform.bootstrap('kill-each@example.com', 'Steady');
    other = await platform.bootstrap('kill-each-2@example.com', 'Later');
    for (const name of ['gateway', 'gateway-2']) uploaders.set(name, await platform.bootstrap(`kill-each-${name}@example.com`, `Upload ${name}`));
    const source = await fixtureDir('node-server');
    // An upload that takes a moment: a few MB that do not compress.
    uploadSource = await fixtureDir('static-site');
    await writeFile(join(uploadSource, 'noise.bin'), randomBytes(4 * 1024 * 1024));
    dirs.push(source, uploadSource);
    const deployed = await platform.deploy(steady, source);
    if (deployed.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(deployed).slice(0, 2000)}`);
    await platform.enableSignIn(steady);
    loop = new RequestLoop(platform.ports.edge, `${steady.slug}.localhost:${platform.ports.edge}`, '/hello');
    await loop.answeredAfter(clock() - 1000, 30_000);
    users = new SignInLoop(platform.ports.auth, steady.slug, steady.appUrl);
    await waitFor(() => users.acknowledged.length > 0 || undefined, { timeoutMs: 30_000, what: 'a first acknowledged sign-up' });
  }, 300_000);

  afterAll(async () => {
    await loop?.stop();
    await users?.stop();
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    if (rows.length) {
      process.stdout.write(`kill-each (2 cores; load ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}):\n`);
      for (const r of rows)
        process.stdout.write(
          `  ${r.label.padEnd(22)} app ${r.appFailed}/${r.appTotal} failed · sign-in: ${r.signIn}${r.cutByKill ? ` (+${r.cutByKill} cut in flight)` : ''} · ready again after ${(r.readyMs / 1000).toFixed(1)} s\n`,
        );
    }
  }, 120_000);

  /** Kills the target's process, waits until it is back and everything is ready, and measures what the clients saw. */
  async function killAndMeasure(target: Target): Promise<Row> {
    await loop.answeredAfter(clock(), 30_000);
    const pid = await target.pid();
    const killedAt = clock();
    process.kill(pid, 'SIGKILL');
    const meanwhile = target.meanwhile?.();
    const readyAt = await waitFor(async () => ((await target.back(pid)) && (await everyReady()) ? clock() : undefined), {
      timeoutMs: 90_000,
      intervalMs: 100,
      what: `${target.label} to be back and every service ready`,
    });
    const answered = await loop.answeredAfter(readyAt, 30_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const end = Math.max(answered.at, clock());
    const during = loop.between(killedAt, end);
    const summary = users.summary(killedAt, end);
    const cut = users.samples.filter((s) => s.at < killedAt && s.at + s.ms >= killedAt && !s.ok).length;
    await meanwhile;
    const row = {
      label: target.label,
      appFailed: during.filter((s) => s.status !== 200).length,
      appTotal: during.length,
      signIn: formatSignInSummary(summary),
      failedSessionReads: summary.failedSessionReads,
      cutByKill: cut,
      readyMs: readyAt - killedAt,
    };
    rows.push(row);
    // What the services logged for the failures the clients saw (their correlation ids).
    const ids = new Set(users.between(killedAt, end).flatMap((s) => [...(s.detail ?? '').matchAll(/correlation id ([0-9a-f-]{36})/g)].map((m) => m[1]!)));
    const lines = platform.log().split('\n');
    const hits = lines.flatMap((l, i) => ([...ids].some((id) => l.includes(id)) ? [i] : [])).slice(0, 3);
    // Each with the lines after it (a stack, Prisma's multi-line message).
    for (const i of hits)
      process.stdout.write(
        `kill-each: logged:\n${lines
          .slice(i, i + 8)
          .map((l) => `  ${l.slice(0, 400)}`)
          .join('\n')}\n`,
      );
    process.stdout.write(
      `kill-each: ${row.label} kill -9 → ${row.appFailed} of ${row.appTotal} app requests failed; sign-in: ${row.signIn}; every /health/ready 200 again after ${(row.readyMs / 1000).toFixed(1)} s\n`,
    );
    return row;
  }

  function expectUnnoticed(row: Row): void {
    expect({ kill: row.label, appFailed: row.appFailed, failedSessionReads: row.failedSessionReads }).toEqual({
      kill: row.label,
      appFailed: 0,
      failedSessionReads: 0,
    });
    expect(row.appTotal).toBeGreaterThan(0);
  }

  it.each(['build-worker', 'gateway', 'gateway-2', 'auth-service', 'auth-service-2', 'edge', 'redis'])(
    '%s: back by itself, no app request and no session read failed (a gateway process: no upload refused)',
    async (name) => {
      const uploader = uploaders.get(name);
      let upload: { code: number | null; stdout: string; stderr: string } | undefined;
      const row = await killAndMeasure({
        label: name,
        pid: published(name),
        back: announced(name, name === 'redis' ? 'redis-server' : name),
        // The killed gateway process's sibling takes the upload: a deploy is never refused.
        ...(uploader
          ? { meanwhile: async () => void (upload = await platform.cli(['deploy', uploadSource, '--no-wait', '--json'], platform.cliEnv(uploader))) }
          : {}),
      });
      expectUnnoticed(row);
      if (uploader) expect({ code: upload?.code, output: upload?.code === 0 ? '' : `${upload?.stdout} ${upload?.stderr}` }).toEqual({ code: 0, output: '' });
    },
    150_000,
  );

  it('an nginx worker: its master replaces it, nothing failed', async () => {
    const master = await nginxMaster();
    const row = await killAndMeasure({
      label: 'nginx worker',
      pid: async () => (await nginxWorkers(master))[0]!.pid,
      back: async (killed) => (await nginxWorkers(master)).some((w) => w.pid !== killed),
    });
    expectUnnoticed(row);
    expect(await nginxMaster()).toBe(master);
  }, 150_000);

  it("nginx's master: a new one takes over its sockets, the old workers go, nothing failed", async () => {
    const old = await nginxMaster();
    const oldWorkers = (await nginxWorkers(old)).map((w) => w.pid);
    const row = await killAndMeasure({
      label: 'nginx master',
      pid: async () => old,
      back: async () => (await nginxMaster().catch(() => old)) !== old && !(await liveProcesses('nginx: ')).some((p) => oldWorkers.includes(p.pid)),
    });
    expectUnnoticed(row);
  }, 150_000);

  it('the runtime supervisor: the apps keep running (same processes), nothing failed', async () => {
    const before = (await processesNaming(releases)).map((p) => p.pid).sort();
    expect(before.length).toBeGreaterThan(0);
    const master = await nginxMaster();
    const row = await killAndMeasure({ label: 'runtime supervisor', pid: published('runtime'), back: announced('runtime') });
    expectUnnoticed(row);
    expect((await processesNaming(releases)).map((p) => p.pid).sort()).toEqual(before);
    // nginx too: the restarted supervisor adopted the running master (no bind error, no new one).
    expect(await nginxMaster()).toBe(master);
    expect(platform.log()).not.toMatch(/Address already in use/);
  }, 150_000);

  it('the embedded Postgres: back by itself, every service ready within 10 s, no app request and no session read failed', async () => {
    const row = await killAndMeasure({ label: 'postgres', pid: published('postgres'), back: announced('postgres') });
    expectUnnoticed(row);
    expect(row.readyMs).toBeLessThan(POSTGRES_READY_BOUND_MS);
  }, 150_000);

  it('after every kill, routes still change: a new application is deployed and served, and the uploads taken during the gateway kills deployed', async () => {
    const site = await fixtureDir('static-site');
    dirs.push(site);
    expect(await platform.deploy(other, site)).toMatchObject({ status: 'succeeded' });
    const served = await waitFor(
      async () => {
        const reply = await platform.viaEdge(other.slug, '/');
        return reply.status === 200 ? reply : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the application deployed after the kills to be served' },
    );
    expect(served.status).toBe(200);
    for (const [name, account] of uploaders) {
      const reply = await waitFor(
        async () => {
          const answer = await platform.viaEdge(account.slug, '/');
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250, what: `the upload taken during the ${name} kill to be deployed and served` },
      );
      expect(reply.status).toBe(200);
    }
  }, 240_000);

  it('no acknowledged sign-up was lost, and Ctrl-C stops everything', async () => {
    await users.stop();
    await loop.stop();
    const lost = await users.lostUsers();
    process.stdout.write(`kill-each: ${users.acknowledged.length} acknowledged sign-ups, ${lost.length} lost\n`);
    expect(lost).toEqual([]);
    expect(users.acknowledged.length).toBeGreaterThan(0);
    const { code } = await platform.stop();
    expect(code).toBe(0);
    expect(await processesNaming(releases)).toEqual([]);
    expect((await liveProcesses('nginx: ')).filter((p) => p.title.includes(stateDir))).toEqual([]);
  }, 180_000);
});
