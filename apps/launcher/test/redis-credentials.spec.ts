/**
 * Credentials as a second wall (issue 17): without REDIS_URL the launcher runs its own
 * redis-server with a generated password. Played from where a tenant's process stands: a local
 * client that knows the address but not the password, and what `ps` shows every user.
 * Real built launcher and services, real redis-server.
 */
import { spawnSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createEmptyDatabase, startProcess, waitFor, type RunningProcess, type TestDatabase } from '@slipway/testing';
import { CLI, LAUNCHER, ROOT, alive, cleanUp, expectCleanStop, launcherEnv, readRuntime, scratchHome } from './support.js';

async function mode(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

/** Sends inline commands over a bare TCP connection; resolves with one reply line per command. */
function speakResp(port: number, commands: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      const lines = received.split('\r\n');
      if (lines.length > commands.length) {
        socket.end();
        resolve(lines.slice(0, commands.length));
      }
    });
    socket.write(commands.map((c) => `${c}\r\n`).join(''));
  });
}

function client(url: string): Redis {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  return redis;
}

describe("pnpm start's own Redis", () => {
  let home: string;
  let launcher: RunningProcess | undefined;
  let db: TestDatabase | undefined;
  const clients: Redis[] = [];
  beforeEach(async () => {
    home = await scratchHome();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.disconnect();
    await cleanUp(launcher, home, db);
    [launcher, db] = [undefined, undefined];
  });

  it('requires its generated password (NOAUTH without it), keeps it out of argv and logs, and the services work with it', async () => {
    db = await createEmptyDatabase('launcher');
    const env = await launcherEnv(home, { DATABASE_URL: db.url });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready/, 120_000);

    const runtime = await readRuntime(home);
    expect(await mode(join(home, 'runtime.json'))).toBe(0o600);
    const url = new URL(runtime.redisUrl);
    expect(url.hostname).toBe('127.0.0.1');
    const password = decodeURIComponent(url.password);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(launcher.output()).toMatch(new RegExp(`launcher\\s+\\| started redis-server on 127\\.0\\.0\\.1:${url.port} \\(password in `));
    expect((await readFile(join(home, 'redis', 'password'), 'utf8')).trim()).toBe(password);
    expect(await mode(join(home, 'redis'))).toBe(0o700);
    expect(await mode(join(home, 'redis', 'password'))).toBe(0o600);
    expect(await mode(join(home, 'redis', 'redis.conf'))).toBe(0o600);

    // A local process that knows the address but not the password (as a tenant's preinstall
    // talking RESP to it) gets nothing.
    expect(await speakResp(Number(url.port), ['PING', 'DBSIZE', 'KEYS bull:*', 'AUTH not-the-password'])).toEqual([
      '-NOAUTH Authentication required.',
      '-NOAUTH Authentication required.',
      '-NOAUTH Authentication required.',
      '-WRONGPASS invalid username-password pair or user is disabled.',
    ]);

    const authed = client(runtime.redisUrl);
    clients.push(authed);
    await authed.connect();
    const flat = (await authed.call('CONFIG', 'GET', '*')) as string[];
    const config = Object.fromEntries(flat.flatMap((value, i) => (i % 2 ? [] : [[value, flat[i + 1]]])));
    expect(config).toMatchObject({ bind: '127.0.0.1', 'protected-mode': 'yes', appendonly: 'yes', 'maxmemory-policy': 'noeviction' });

    // Every service answered /health/ready (Postgres and Redis up) before the ready line; the
    // operator command works from runtime.json.
    const cli = spawnSync(process.execPath, [CLI, 'admin', 'bootstrap', '--email', 'ops@example.com', '--app', 'Hello', '--json'], {
      env: { PATH: process.env['PATH'], SLIPWAY_HOME: home },
      encoding: 'utf8',
    });
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    for (const port of [env['GATEWAY_PORT'], env['AUTH_PORT'], env['EDGE_PORT'], env['BUILD_WORKER_PORT']]) {
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      expect(await ready.json()).toMatchObject({ status: 'ok', checks: { redis: { status: 'up' } } });
    }

    // What every user of the machine sees: argv of every process. And the whole log.
    const ps = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
    expect(ps.stdout).toMatch(new RegExp(`^\\s*${runtime.processes['redis']} \\S*redis-server`, 'm'));
    expect(ps.stdout).not.toContain(password);
    expect(launcher.output()).not.toContain(password);

    await expectCleanStop(launcher, home);
  });

  it('after a killed launcher, stops the redis-server it left and starts again with the same password and data', async () => {
    db = await createEmptyDatabase('launcher');
    const env = await launcherEnv(home, { DATABASE_URL: db.url });
    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready/, 120_000);
    const first = await readRuntime(home);
    const kept = client(first.redisUrl);
    await kept.connect();
    await kept.set('slipway-test:kept', 'across restarts');
    kept.disconnect();

    process.kill(launcher.child.pid!, 'SIGKILL');
    await launcher.exited;
    // Redis and PgBouncer are detached (they outlive a killed launcher; the next one stops them).
    const { redis: leftRedis, pgbouncer: leftPgbouncer, ...services } = first.processes;
    expect(alive(leftRedis!)).toBe(true);
    expect(alive(leftPgbouncer!)).toBe(true);
    // Services notice the launcher is gone and exit by themselves; their ports free up.
    await waitFor(() => Object.values(services).every((pid) => !alive(pid)), { timeoutMs: 20_000, what: 'services to exit' });

    launcher = startProcess(process.execPath, [LAUNCHER], { cwd: ROOT, env });
    await launcher.waitForOutput(/Slipway is ready/, 120_000);
    expect(launcher.output()).toMatch(/stopped the redis-server an earlier launcher left running on 127\.0\.0\.1:\d+/);
    expect(alive(leftRedis!)).toBe(false);
    expect(launcher.output()).toMatch(new RegExp(`stopped the PgBouncer an earlier launcher left running \\(pid ${leftPgbouncer}\\)`));
    expect(alive(leftPgbouncer!)).toBe(false);
    const second = await readRuntime(home);
    expect(new URL(second.redisUrl).password).toBe(new URL(first.redisUrl).password);
    const again = client(second.redisUrl);
    clients.push(again);
    await again.connect();
    expect(await again.get('slipway-test:kept')).toBe('across restarts');
    await expectCleanStop(launcher, home);
  });
});
