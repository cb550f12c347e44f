/**
 * The gateway and the sign-in service under `pnpm start` are each several processes accepting on
 * one listening socket the launcher holds (GATEWAY_PROCESSES, AUTH_PROCESSES; default 2). With a
 * deployed app under a steady request loop and 4 end users signing up and reading their sessions,
 * kill -9 of each process of either service in turn costs no app request, no session read and no
 * acknowledged sign-up; a deploy started while a gateway process is down is not refused; every
 * process is back by itself. Per kill it prints failed app requests, failed sign-in requests and
 * the time until every /health/ready answers 200 again.
 *
 * A sign-in request without an answer within 5 s counts as failed (as the app loop's requests).
 * The assertion is on requests sent after the kill; a request the killed process was serving at
 * that moment is cut (its connection reset) and is counted and printed separately: no process
 * can answer a request after kill -9, only a retrying proxy or client could hide it.
 * `FAULTS_SERVICE_PROCESSES=1` runs the same with one process per service (the mechanism off: the
 * socket still held, so nothing is refused, but every request waits in its backlog until the one
 * process is back; the figures go to the README).
 */
import { rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { LaunchedPlatform, RequestLoop } from './support/launched.js';
import { formatSignInSummary, SignInLoop } from './support/sign-in-loop.js';
import type { Account } from './support/platform.js';

const PROCESSES = process.env['FAULTS_SERVICE_PROCESSES'] ?? '2';
const SERVICES = ['gateway', 'auth-service', 'edge', 'build-worker'] as const;

interface Upload {
  label: string;
  code: number | null;
  taskId?: string;
  account: Account;
  output: string;
}

describe(`fault: kill -9 of each gateway and sign-in process under pnpm start (${PROCESSES} per service)`, () => {
  let platform: LaunchedPlatform;
  let steady: Account;
  let loop: RequestLoop;
  let users: SignInLoop;
  const dirs: string[] = [];
  const uploads: Upload[] = [];
  let uploadSource: string;

  beforeAll(async () => {
    platform = await LaunchedPlatform.start('service-kill', {
      GATEWAY_PROCESSES: PROCESSES,
      AUTH_PROCESSES: PROCESSES,
      // 4 clients on one address sign up and read sessions far more often than one person would:
      // the per-address limits are not what is measured here (nor bcrypt's cost).
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000',
      AUTH_RATE_LIMIT_SESSION_MAX: '1000000',
      AUTH_BCRYPT_COST: '4',
    });
    steady = await platform.bootstrap('service-kill@example.com', 'Steady');
    const source = await fixtureDir('node-server');
    // An upload that takes a moment: a few MB that do not compress.
    uploadSource = await fixtureDir('static-site');
    await writeFile(join(uploadSource, 'noise.bin'), randomBytes(6 * 1024 * 1024));
    dirs.push(source, uploadSource);
    const deployed = await platform.cli(['deploy', source, '--json'], platform.cliEnv(steady));
    if (deployed.code !== 0) throw new Error(`deploy failed: ${deployed.stdout} ${deployed.stderr}`);
    await platform.enableSignIn(steady);
    loop = new RequestLoop(platform.ports.edge, `${steady.slug}.localhost:${platform.ports.edge}`, '/hello');
    await loop.answeredAfter(Date.now() - 1000, 30_000);
    users = new SignInLoop(platform.ports.auth, steady.slug, steady.appUrl);
    await waitFor(() => users.acknowledged.length > 0 || undefined, { timeoutMs: 30_000, what: 'a first acknowledged sign-up' });
  }, 300_000);

  afterAll(async () => {
    await loop?.stop();
    await users?.stop();
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** The processes runtime.json lists for the two services: gateway, gateway-2, …, auth-service, auth-service-2, … */
  async function processNames(): Promise<string[]> {
    const names = Object.keys((await platform.runtime()).processes).filter((n) => /^(gateway|auth-service)(-\d+)?$/.test(n));
    return names.sort((a, b) => (a.startsWith('gateway') === b.startsWith('gateway') ? a.localeCompare(b) : a.startsWith('gateway') ? -1 : 1));
  }

  /** `slipway deploy --no-wait` of the few-MB site, as a new application's. */
  async function upload(label: string): Promise<Upload> {
    const account = await platform.bootstrap('service-kill@example.com', `Upload ${label}`);
    const result = await platform.cli(['deploy', uploadSource, '--no-wait', '--json'], platform.cliEnv(account), 120_000);
    let taskId: string | undefined;
    try {
      taskId = (JSON.parse(result.stdout) as { taskId?: string }).taskId;
    } catch {
      /* not accepted: the output says why */
    }
    const done = { label, code: result.code, account, output: `${result.stdout} ${result.stderr}`.trim().slice(-400), ...(taskId ? { taskId } : {}) };
    uploads.push(done);
    return done;
  }

  it('runs several processes of each service, each named in runtime.json', async () => {
    const names = await processNames();
    const expected = Number(PROCESSES);
    expect(names.filter((n) => n.startsWith('gateway'))).toHaveLength(expected);
    expect(names.filter((n) => n.startsWith('auth-service'))).toHaveLength(expected);
  });

  it('kill -9 of each process in turn: 0 failed app requests, 0 failed session reads, no upload refused, each back by itself', async () => {
    const results: string[] = [];
    const failures: string[] = [];
    // Each kill's stretch starts where the last one ended, so a request in flight on the killed
    // process (sent before the kill) is counted too.
    let from = Date.now();
    for (const name of await processNames()) {
      const gateway = name.startsWith('gateway');
      const pid = await platform.pid(name);
      // A gateway kill: one upload already in flight (it may fail if the killed process had it),
      // and one started right after the kill (it must not be refused).
      const inFlight = gateway ? upload(`${name} in flight`) : undefined;
      if (inFlight) await new Promise((r) => setTimeout(r, 900));
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      const afterKill = gateway ? upload(`${name} after the kill`) : undefined;
      const back = await waitFor(async () => {
        const now = await platform.pid(name).catch(() => pid);
        if (now === pid || !new RegExp(`launcher\\s+\\| ${name} is back \\(pid ${now}\\)`).test(platform.log())) return undefined;
        const statuses = await Promise.all(SERVICES.map((s) => platform.ready(s)));
        return statuses.every((s) => s === 200) ? Date.now() : undefined;
      }, { timeoutMs: 90_000, intervalMs: 100, what: `${name} to be restarted, and every /health/ready to answer 200` });
      const [early, late] = await Promise.all([inFlight, afterKill]);
      // Let both loops run on past the recovery before counting.
      await new Promise((r) => setTimeout(r, 1000));
      const to = Date.now();
      const app = loop.between(from, to);
      const failedApp = app.filter((s) => s.status !== 200).length;
      // Sent after the kill: the socket must take them (none refused, none left waiting past 5 s).
      const signIn = users.summary(killedAt, to);
      // Sent before the kill and cut by it: a request the killed process was serving (measured, printed).
      const cut = users.summary(from, killedAt);
      from = to;
      const uploadNote = gateway ? `; upload in flight: ${early!.code === 0 ? 'accepted' : `failed (${early!.output.slice(-160)})`}; upload after the kill: ${late!.code === 0 ? 'accepted' : `failed (${late!.output.slice(-160)})`}` : '';
      const cutNote = `; in flight on the killed process and cut: ${cut.failedSignUps} sign-ups, ${cut.failedSessionReads} session reads`;
      const line = `${name} kill -9 → ${failedApp} of ${app.length} app requests failed; sign-in after the kill: ${formatSignInSummary(signIn)}${cutNote}; every /health/ready 200 again after ${((back - killedAt) / 1000).toFixed(1)} s${uploadNote}`;
      process.stdout.write(`service-kill (${PROCESSES} per service): ${line}\n`);
      results.push(line);
      if (failedApp > 0) failures.push(`${name}: ${failedApp} app requests failed`);
      if (signIn.failedSessionReads > 0) failures.push(`${name}: ${signIn.failedSessionReads} session reads failed (${signIn.examples.join('; ')})`);
      if (late && late.code !== 0) failures.push(`${name}: the upload started after the kill was not accepted: ${late.output}`);
    }
    expect({ failures, results }).toEqual({ failures: [], results });
  }, 600_000);

  it('every acknowledged sign-up can still sign in, and every accepted upload is deployed', async () => {
    await users.stop();
    const summary = users.summary();
    process.stdout.write(`service-kill (${PROCESSES} per service): whole run: ${formatSignInSummary(summary)}; ${users.acknowledged.length} acknowledged users\n`);
    expect(users.acknowledged.length).toBeGreaterThan(10);
    expect(await users.lostUsers()).toEqual([]);
    for (const accepted of uploads.filter((u) => u.taskId)) {
      const final = await waitFor(async () => {
        const task = await platform.task(accepted.account, accepted.taskId!).catch(() => undefined);
        return task && (task.status === 'succeeded' || task.status === 'failed') ? task : undefined;
      }, { timeoutMs: 180_000, intervalMs: 250, what: `the upload "${accepted.label}" to be deployed` });
      expect({ upload: accepted.label, status: final.status }).toEqual({ upload: accepted.label, status: 'succeeded' });
    }
  }, 300_000);

  it('Ctrl-C still stops everything', async () => {
    await loop.stop();
    const { code } = await platform.stop();
    expect(code).toBe(0);
  }, 90_000);
});
