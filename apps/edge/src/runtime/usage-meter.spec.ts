/**
 * The usage meter: real nginx counting requests into the files (the config the edge renders),
 * scores that decay (an injected clock) and survive a new meter (a restart), and the order they
 * give (more used first, then last deployed).
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NginxPlane } from '@slipway/data-plane';
import { UsageMeter } from './usage-meter.js';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';
const DAY = 24 * 3600_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function get(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('UsageMeter', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-usage-'));
    // Traversable, as `pnpm start` makes its home: nginx's workers run as their own user.
    await chmod(dir, 0o711);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts the requests real nginx proxied (one byte each, flushed when nginx stops)', async () => {
    const usage = new UsageMeter(join(dir, 'usage'), { halfLifeMs: DAY });
    await usage.load();
    const app = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((ok) => app.listen(0, '127.0.0.1', ok));
    const fallback = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((ok) => fallback.listen(0, '127.0.0.1', ok));
    const port = await freePort();
    const plane = new NginxPlane({
      bin: 'nginx',
      stateDir: join(dir, 'nginx'),
      listen: { host: '127.0.0.1', port },
      fallback: { host: '127.0.0.1', port: (fallback.address() as { port: number }).port },
      scheme: 'http',
      workers: 1,
      owner: 'edge',
    });
    try {
      await plane.start([
        {
          kind: 'proxy',
          id: 'a',
          hosts: ['a.localhost'],
          upstream: { host: '127.0.0.1', port: (app.address() as { port: number }).port },
          usageLog: usage.logFor(A)!,
        },
      ]);
      for (let i = 0; i < 25; i++) expect(await get(port, 'a.localhost')).toBe(200);
      // Unknown hosts (the Node edge's) are not counted for anyone.
      expect(await get(port, 'other.localhost')).toBe(503);
    } finally {
      await plane.close(2000);
      app.close();
      fallback.close();
    }
    await usage.fold();
    expect(usage.score(A)).toBe(25);
    // Counted once: the file was emptied.
    expect((await stat(usage.logFor(A)!)).size).toBe(0);
    await usage.fold();
    expect(usage.score(A)).toBeCloseTo(25, 3);
  }, 30_000);

  it('decays by half per half-life, keeps scores across a restart, and counts what nginx wrote meanwhile', async () => {
    let now = 1_000_000;
    const clock = () => now;
    const first = new UsageMeter(dir, { halfLifeMs: DAY, now: clock });
    await first.load();
    await writeFile(first.logFor(A)!, '\n'.repeat(100));
    first.count(B, 10); // proxied by the Node edge itself
    await first.fold();
    expect([first.score(A), first.score(B)]).toEqual([100, 10]);
    now += DAY;
    await first.fold();
    expect(first.score(A)).toBeCloseTo(50, 6);
    await first.close();
    const kept = JSON.parse(await readFile(join(dir, 'scores.json'), 'utf8')) as { scores: Record<string, number> };
    expect(kept.scores[A]).toBeCloseTo(50, 6);

    // Stopped; nginx flushed 8 more of B's requests on its way out; a day later the platform starts again.
    await writeFile(first.logFor(B)!, '\n'.repeat(8));
    now += DAY;
    const second = new UsageMeter(dir, { halfLifeMs: DAY, now: clock });
    await second.load();
    expect(second.score(A)).toBeCloseTo(25, 6);
    expect(second.score(B)).toBeCloseTo(10 / 4 + 8, 6);
  });

  it('orders more used first, then the most recently deployed; forgets applications that are gone', async () => {
    let now = 5000;
    const usage = new UsageMeter(dir, { halfLifeMs: DAY, now: () => now });
    await usage.load();
    usage.count(A, 3);
    await usage.fold();
    await usage.deployed(B);
    now += 10;
    await usage.deployed(C);
    expect([B, C, A].sort(usage.compare)).toEqual([A, C, B]);
    // Written down at the deploy: a restart right after keeps the order.
    const restarted = new UsageMeter(dir, { halfLifeMs: DAY, now: () => now });
    await restarted.load();
    expect([B, C, A].sort(restarted.compare)).toEqual([A, C, B]);
    usage.keepOnly(new Set([B]));
    expect(usage.score(A)).toBe(0);
    expect([A, B, C].sort(usage.compare)).toEqual([B, A, C]);
    // Nothing but an application id names a file.
    expect(usage.logFor('../../etc/passwd')).toBeUndefined();
  });

  it('starts from nothing when the kept file is unreadable', async () => {
    await writeFile(join(dir, 'scores.json'), '{not json');
    const usage = new UsageMeter(dir, { halfLifeMs: DAY });
    await usage.load();
    expect(usage.score(A)).toBe(0);
  });
});
