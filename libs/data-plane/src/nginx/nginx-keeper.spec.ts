import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { connect, createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdListeningSocket, type HeldSocket } from '@slipway/service-kit';
import type { Site } from './nginx-config.js';
import { NginxKeeper, type NginxKeeperConfig } from './nginx-keeper.js';
import { NginxPlane } from './nginx-plane.js';
import { alive, runningMaster, workersOf } from './nginx-process.js';
import { listeningOn, socketInodesOf } from './nginx-sockets.js';

const DRAIN_GRACE_MS = 2_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** One request on a connection of its own (as independent clients do): status and body, status 0 when it failed. */
function get(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', (error) => resolve({ status: 0, body: error.message }));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Requests one after another until stopped, bounded in time (60 s) and count. */
class Loop {
  readonly samples: { at: number; status: number; body: string }[] = [];
  private stopped = false;
  private readonly done: Promise<void>;
  constructor(port: number, host: string) {
    this.done = (async () => {
      const end = Date.now() + 60_000;
      while (!this.stopped && Date.now() < end && this.samples.length < 50_000) {
        const at = Date.now();
        this.samples.push({ at, ...(await get(port, host)) });
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
  }
  async stop(): Promise<{ total: number; failed: number; errors: string[] }> {
    this.stopped = true;
    await this.done;
    const failed = this.samples.filter((s) => s.status !== 200);
    return { total: this.samples.length, failed: failed.length, errors: [...new Set(failed.map((s) => `${s.status} ${s.body.slice(0, 80)}`))] };
  }
}

/** A tiny app: `/slow` answers after a second, anything else at once, with the app's name. */
async function app(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.url === '/slow') setTimeout(() => res.end(`${name} slow`), 1000);
    else res.end(name);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as { port: number }).port };
}

const site = (port: number): Site => ({ kind: 'proxy', id: 'one', hosts: ['one.localhost'], upstream: { host: '127.0.0.1', port } });

async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Kills the master and waits for the keeper's new one and for every old worker to be gone; the figures. */
async function killMaster(
  keeper: NginxKeeper,
  stateDir: string,
): Promise<{ master: number; next: number; orphans: number[]; orphansGoneMs: number; takeoverMs: number }> {
  const master = (await runningMaster(stateDir))!;
  const orphans = (await workersOf(master)).map((w) => w.pid);
  expect(orphans.length).toBeGreaterThan(0);
  const killedAt = Date.now();
  process.kill(master, 'SIGKILL');
  const next = await waitFor(async () => {
    const now = await runningMaster(stateDir);
    return now && now !== master ? now : undefined;
  }, 'a new master');
  const takeoverMs = Date.now() - killedAt;
  await waitFor(() => (orphans.every((pid) => !alive(pid)) ? true : undefined), 'the old workers to be gone', DRAIN_GRACE_MS + 5_000);
  const orphansGoneMs = Date.now() - killedAt;
  await keeper.settled();
  return { master, next, orphans, orphansGoneMs, takeoverMs };
}

describe('nginx keeper (real nginx, real sockets)', () => {
  let dir: string;
  let port: number;
  let fallback: Server;
  let config: NginxKeeperConfig;
  const apps: Server[] = [];
  const keepers: NginxKeeper[] = [];
  const launcherSockets: HeldSocket[] = [];

  beforeAll(async () => {
    fallback = createServer((_req, res) => res.writeHead(404).end('fallback'));
    await new Promise<void>((ok) => fallback.listen(0, '127.0.0.1', ok));
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-nginx-keeper-'));
    // Traversable, as `pnpm start` makes its home: nginx's workers run as their own user.
    await chmod(dir, 0o711);
    port = await freePort();
    config = {
      NGINX_BIN: 'nginx',
      HOST: '127.0.0.1',
      PORT: port,
      EDGE_INTERNAL_PORT: (fallback.address() as { port: number }).port,
      APPS_SCHEME: 'http',
      NGINX_WORKERS: 2,
      DRAIN_GRACE_MS,
      EDGE_HTTPS: 'off',
      EDGE_HTTPS_PORT: 443,
      NGINX_USER: 'slipway-edge',
    };
  });
  afterEach(async () => {
    for (const keeper of keepers.splice(0)) await keeper.close();
    for (const socket of launcherSockets.splice(0)) socket.close();
    await rm(dir, { recursive: true, force: true });
  });
  afterAll(() => {
    for (const server of [...apps, fallback]) server.close();
  });

  const stateDir = () => join(dir, 'nginx');
  const plane = () =>
    new NginxPlane({
      bin: 'nginx',
      stateDir: stateDir(),
      listen: { host: '127.0.0.1', port },
      fallback: { host: '127.0.0.1', port: config.EDGE_INTERNAL_PORT },
      scheme: 'http',
      workers: config.NGINX_WORKERS,
      owner: 'supervisor',
    });
  const keeper = (env: NodeJS.ProcessEnv = {}, overrides: Partial<NginxKeeperConfig> = {}) => {
    const made = new NginxKeeper({ ...config, ...overrides }, dir, env);
    keepers.push(made);
    return made;
  };
  /** The socket as the launcher holds it and names it to the runtime supervisor. */
  const fromLauncher = async (roles: [string, number][]): Promise<NodeJS.ProcessEnv> => {
    const pairs: string[] = [];
    for (const [role, p] of roles) {
      const held = await holdListeningSocket(p, '127.0.0.1');
      launcherSockets.push(held);
      pairs.push(`${role}=${held.fd}`);
    }
    return { SLIPWAY_LISTEN_FDS: pairs.join(',') };
  };
  const newApp = async (name: string) => {
    const made = await app(name);
    apps.push(made.server);
    return made;
  };

  it('kill -9 of the master under a request loop: no request fails, the orphaned workers finish and go within the grace, and the next reload applies', async () => {
    const keeperA = keeper(await fromLauncher([['edge', port]]));
    await keeperA.start();
    const edge = plane();
    const v1 = await newApp('v1');
    await edge.start([site(v1.port)]);
    expect(await get(port, 'one.localhost')).toMatchObject({ status: 200, body: 'v1' });

    const loop = new Loop(port, 'one.localhost');
    await waitFor(() => (loop.samples.length > 50 ? true : undefined), 'the loop to run');
    // A request in flight on the old instance when its master dies: its worker finishes it.
    const slow = get(port, 'one.localhost', '/slow');
    await new Promise((r) => setTimeout(r, 100));
    const killed = await killMaster(keeperA, stateDir());
    await new Promise((r) => setTimeout(r, 300));
    const figures = await loop.stop();
    const inFlight = await slow;
    process.stdout.write(
      `nginx keeper: master kill -9 → new master in ${killed.takeoverMs} ms, old workers ${killed.orphans.join(',')} gone after ${killed.orphansGoneMs} ms (grace ${DRAIN_GRACE_MS} ms); ${figures.failed} of ${figures.total} requests failed; request in flight: ${inFlight.status}\n`,
    );
    expect(figures).toMatchObject({ failed: 0, errors: [] });
    expect(inFlight).toEqual({ status: 200, body: 'v1 slow' });
    expect(killed.orphansGoneMs).toBeLessThan(DRAIN_GRACE_MS + 2_500);
    expect(keeperA.masterPid).toBe(killed.next);
    // The new master serves the very socket the launcher holds.
    expect([...(await socketInodesOf(killed.next))]).toEqual(expect.arrayContaining(await listeningOn(port)));

    // Routes still change: the edge reloads the new master.
    const v2 = await newApp('v2');
    await edge.apply([site(v2.port)]);
    expect(await get(port, 'one.localhost')).toMatchObject({ status: 200, body: 'v2' });
    await edge.close(1000);
  }, 60_000);

  it('kill -9 of a worker: its master replaces it, no request started after the kill fails', async () => {
    const keeperA = keeper(await fromLauncher([['edge', port]]));
    await keeperA.start();
    const edge = plane();
    const v1 = await newApp('w1');
    await edge.start([site(v1.port)]);
    const master = keeperA.masterPid!;
    const loop = new Loop(port, 'one.localhost');
    await waitFor(() => (loop.samples.length > 50 ? true : undefined), 'the loop to run');
    const [worker] = await workersOf(master);
    const killedAt = Date.now();
    process.kill(worker!.pid, 'SIGKILL');
    const replaced = await waitFor(
      async () => ((await workersOf(master)).filter((w) => w.pid !== worker!.pid).length === config.NGINX_WORKERS ? true : undefined),
      'a new worker',
    );
    await new Promise((r) => setTimeout(r, 300));
    const figures = await loop.stop();
    process.stdout.write(`nginx keeper: worker kill -9 → ${figures.failed} of ${figures.total} requests failed\n`);
    expect(replaced).toBe(true);
    // The request the killed worker was answering at that instant dies with it (a reset: no proxy
    // can finish what its process was doing), one at most since the loop has one in flight. Every
    // request sent after the kill waits in the master's listening socket for the new worker.
    const lost = loop.samples.filter((s) => s.status !== 200);
    expect(lost.length).toBeLessThanOrEqual(1);
    for (const sample of lost) {
      expect(sample.at).toBeLessThanOrEqual(killedAt);
      expect(sample.body).toMatch(/ECONNRESET|socket hang up/);
    }
    expect(keeperA.masterPid).toBe(master);
    await edge.close(1000);
  }, 60_000);

  it('a second keeper (a restarted supervisor) adopts the running master without a failed request, and heals it when it dies later', async () => {
    const env = await fromLauncher([['edge', port]]);
    const first = keeper(env);
    await first.start();
    const edge = plane();
    const v1 = await newApp('a1');
    await edge.start([site(v1.port)]);
    const master = first.masterPid!;

    const loop = new Loop(port, 'one.localhost');
    await waitFor(() => (loop.samples.length > 50 ? true : undefined), 'the loop to run');
    first.detach();
    const second = keeper(env);
    await second.start();
    expect(second.masterPid).toBe(master);
    // The adopted master is no child of this keeper: it is watched through /proc.
    const killed = await killMaster(second, stateDir());
    await new Promise((r) => setTimeout(r, 300));
    const figures = await loop.stop();
    process.stdout.write(
      `nginx keeper: adoption, then kill -9 of the adopted master → new master in ${killed.takeoverMs} ms, old workers gone after ${killed.orphansGoneMs} ms; ${figures.failed} of ${figures.total} requests failed\n`,
    );
    expect(figures).toMatchObject({ failed: 0, errors: [] });
    expect(second.masterPid).toBe(killed.next);
    const a2 = await newApp('a2');
    await edge.apply([site(a2.port)]);
    expect(await get(port, 'one.localhost')).toMatchObject({ status: 200, body: 'a2' });
    await edge.close(1000);
  }, 60_000);

  it("without the launcher's sockets: the keeper holds its own, adopts a master that holds the port, and a start amid orphaned workers of its state dir retires them instead of failing to bind", async () => {
    const first = keeper();
    await first.start();
    const edge = plane();
    const v1 = await newApp('o1');
    await edge.start([site(v1.port)]);
    // Its own sockets: a master kill costs nothing either.
    let loop = new Loop(port, 'one.localhost');
    await waitFor(() => (loop.samples.length > 50 ? true : undefined), 'the loop to run');
    await killMaster(first, stateDir());
    await new Promise((r) => setTimeout(r, 300));
    const own = await loop.stop();
    expect(own).toMatchObject({ failed: 0, errors: [] });

    // A restarted supervisor cannot hold the port nginx holds: it adopts the master all the same.
    const running = first.masterPid;
    first.detach();
    const second = keeper();
    await second.start();
    expect(second.masterPid).toBe(running);
    loop = new Loop(port, 'one.localhost');
    await waitFor(() => (loop.samples.length > 50 ? true : undefined), 'the loop to run');
    const killed = await killMaster(second, stateDir());
    await new Promise((r) => setTimeout(r, 300));
    const adopted = await loop.stop();
    process.stdout.write(
      `nginx keeper (no launcher sockets): kill -9 of an adopted master → new master in ${killed.takeoverMs} ms, ${adopted.failed} of ${adopted.total} requests failed (${adopted.errors.join('; ')})\n`,
    );
    expect(await get(port, 'one.localhost')).toMatchObject({ status: 200, body: 'o1' });

    // The crash loop: the supervisor gone, then the master killed; its orphaned worker
    // holds the port. The next start retires it and serves.
    second.detach();
    const orphans = (await workersOf(killed.next)).map((w) => w.pid);
    process.kill(killed.next, 'SIGKILL');
    await waitFor(() => (!alive(killed.next) ? true : undefined), 'the master to die');
    expect(orphans.every(alive)).toBe(true);
    const third = keeper();
    const startedAt = Date.now();
    await third.start();
    process.stdout.write(`nginx keeper: start amid orphaned workers ${orphans.join(',')} → serving again in ${Date.now() - startedAt} ms\n`);
    await third.settled();
    expect(orphans.filter(alive)).toEqual([]);
    expect((await get(port, 'one.localhost')).status).toBe(200);
    await edge.close(1000);
  }, 90_000);

  it("with HTTPS on, both sockets go to nginx and stay its own across the edge's TLS reloads and a master kill", async () => {
    const httpsPort = await freePort();
    const keeperA = keeper(
      await fromLauncher([
        ['edge', port],
        ['edge-https', httpsPort],
      ]),
      { EDGE_HTTPS: 'acme', EDGE_HTTPS_PORT: httpsPort },
    );
    await keeperA.start();
    const held = [...(await listeningOn(port)), ...(await listeningOn(httpsPort))];
    expect(held).toHaveLength(2);
    const holdsBoth = async (pid: number) => {
      const inodes = await socketInodesOf(pid);
      return held.map((inode) => inodes.has(inode));
    };
    expect(await holdsBoth(keeperA.masterPid!)).toEqual([true, true]);

    const edge = plane();
    edge.setTls({ httpsPort, redirectHttp: true, certificates: [] });
    const v1 = await newApp('t1');
    await edge.start([site(v1.port)]);
    const v2 = await newApp('t2');
    await edge.apply([site(v2.port)]);
    const killed = await killMaster(keeperA, stateDir());
    expect(await holdsBoth(killed.next)).toEqual([true, true]);
    await edge.apply([site(v1.port)]);
    for (const worker of await workersOf(killed.next)) expect(await holdsBoth(worker.pid)).toEqual([true, true]);
    // Still exactly the launcher's two sockets listening on those ports (nginx bound none of its own).
    expect([...(await listeningOn(port)), ...(await listeningOn(httpsPort))]).toEqual(held);
    expect(await get(port, 'one.localhost')).toMatchObject({ status: 200, body: 't1' });
    // The HTTPS port accepts (the handshake-refusing default server answers there).
    await new Promise<void>((resolve, reject) => {
      const socket = connect(httpsPort, '127.0.0.1', () => {
        socket.destroy();
        resolve();
      }).on('error', reject);
    });
    await edge.close(1000);
  }, 60_000);

  it('close stops nginx gracefully and leaves nothing of it', async () => {
    const keeperA = keeper();
    await keeperA.start();
    const master = keeperA.masterPid!;
    const workers = (await workersOf(master)).map((w) => w.pid);
    await keeperA.close();
    expect([master, ...workers].filter(alive)).toEqual([]);
    expect(await listeningOn(port)).toEqual([]);
  });
});
