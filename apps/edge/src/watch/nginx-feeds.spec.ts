import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NginxPlane, runningMaster } from '@slipway/data-plane';
import { NginxAccessLog, metricsLogFile } from '../metrics/nginx-access-log.js';
import { NginxStatusFeed } from './nginx-status-feed.js';

const APP_ID = '01234567-89ab-cdef-0123-456789abcdef';
const SITE_ID = APP_ID.replace(/-/g, '');

let dir: string;
const usageLog = () => join(dir, 'usage', `${APP_ID}.requests`);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: 'app.localhost' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

async function until(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await condition()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return condition();
}

/**
 * What nginx tells the edge, with real nginx as the plane renders it: its 5xx answers on the
 * status feed (the first-minute watch), every answer of an application in its metrics log (read,
 * then rotated with SIGUSR1 without losing a line).
 */
describe('nginx status feed and metrics log (real nginx)', () => {
  let port: number;
  let plane: NginxPlane;
  let feed: NginxStatusFeed;
  let log: NginxAccessLog;
  const fed: string[] = [];
  const counted: number[] = [];
  let app: Server;
  const fallback = createServer((_req, res) => res.writeHead(404).end('fallback'));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-nginx-feeds-'));
    await chmod(dir, 0o711);
    port = await freePort();
    app = createServer((req, res) => res.writeHead(req.url!.startsWith('/boom') ? 500 : 200).end('x'));
    await new Promise<void>((ok) => app.listen(0, '127.0.0.1', ok));
    await new Promise<void>((ok) => fallback.listen(0, '127.0.0.1', ok));
    const state = join(dir, 'state');
    plane = new NginxPlane({
      bin: 'nginx',
      stateDir: state,
      listen: { host: '127.0.0.1', port },
      fallback: { host: '127.0.0.1', port: (fallback.address() as { port: number }).port },
      scheme: 'http',
      workers: 1,
      owner: 'edge',
    });
    feed = await NginxStatusFeed.open(state, (applicationId, status, method, path) => fed.push(`${applicationId} ${status} ${method} ${path}`));
    plane.setStatusFeed(feed.address);
    plane.setMetricsLog(metricsLogFile(state));
    log = new NginxAccessLog(
      metricsLogFile(state),
      () => runningMaster(state),
      (applicationId, status) => applicationId === APP_ID && counted.push(status),
      { readMs: 100, rotateBytes: 4096 },
    );
    // With its usage log, as under `pnpm start`: a server's own access_log must not shadow the shared ones.
    await mkdir(join(dir, 'usage'));
    await plane.start([
      {
        kind: 'proxy',
        id: SITE_ID,
        hosts: ['app.localhost'],
        upstream: { host: '127.0.0.1', port: (app.address() as { port: number }).port },
        usageLog: usageLog(),
      },
    ]);
    log.start();
  });
  afterAll(async () => {
    await log?.close();
    feed?.close();
    await plane?.close(2000);
    app?.close();
    fallback.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends only 5xx answers to the status feed, with the application, method and path (no query)', async () => {
    expect(await get(port, '/fine')).toBe(200);
    expect(await get(port, '/boom?token=secret')).toBe(500);
    expect(await get(port, '/fine-again')).toBe(200);
    expect(await until(() => fed.length >= 1, 3000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(fed).toEqual([`${APP_ID} 500 GET /boom`]);
  });

  it('writes every answer of the application to the metrics log, read across a rotation without a line lost', async () => {
    // The first test's three answers first (nginx's buffer is flushed at most a second late).
    expect(await until(() => counted.length >= 3, 5000)).toBe(true);
    const before = counted.length;
    const total = 200; // ~50 bytes a line: the 4 KiB rotation happens at least twice
    for (let i = 0; i < total; i++) await get(port, i % 10 === 0 ? '/boom' : '/ok');
    // nginx flushes its buffer at most a second late, the reader looks every 100 ms, an old file is read 3 s more.
    expect(await until(() => counted.length - before >= total, 15_000)).toBe(true);
    expect(counted.length - before).toBe(total);
    expect(counted.slice(before).filter((s) => s === 500)).toHaveLength(20);
    // Rotated: the old file renamed, and the new one made by nginx once its master reopens (SIGUSR1),
    // which may come a moment after the reader counted the last line and renamed.
    const logs = async () => (await readdir(join(dir, 'state'))).filter((f) => f.startsWith('metrics.log'));
    await until(async () => (await logs()).length >= 2, 5000);
    expect(await logs()).toEqual(expect.arrayContaining(['metrics.log', 'metrics.log.1']));
    // The usage meter's log beside it: a byte per request (flushed within 5 s).
    const usageEnd = Date.now() + 8000;
    while (((await stat(usageLog()).catch(() => undefined))?.size ?? 0) < total && Date.now() < usageEnd) await new Promise((r) => setTimeout(r, 200));
    expect((await stat(usageLog())).size).toBeGreaterThanOrEqual(total);
  }, 30_000);
});
