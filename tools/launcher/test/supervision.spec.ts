/**
 * The launcher's supervision of one service, with real child processes (tiny Node scripts in a
 * temporary root): an unexpected exit is restarted and logged with its reason, a crash loop stops
 * with one line, a stopped service is never restarted. And the start-up check of an operator's
 * Redis (real redis-server processes): a warning per setting that can lose queued deploys.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess, waitFor } from '@slipway/testing';
import { warnUnlessDurable } from '../src/redis.js';
import { readiness } from '../src/services.js';
import { SupervisedService } from '../src/supervisor.js';
import { alive } from './support.js';

const SERVER = `
import { createServer } from 'node:http';
createServer((req, res) => res.writeHead(req.url === '/health/ready' ? 200 : 404).end()).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('launcher supervision', () => {
  let root: string;
  let lines: string[];
  const original = process.stdout.write.bind(process.stdout);
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-supervision-'));
    await writeFile(join(root, 'crash.mjs'), 'setTimeout(() => process.exit(3), 20);\n');
    await writeFile(join(root, 'server.mjs'), SERVER);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  // The launcher's log goes to stdout: kept here as well, line by line.
  beforeEach(() => {
    lines = [];
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return original(chunk);
    }) as typeof process.stdout.write;
  });
  afterEach(() => {
    process.stdout.write = original;
  });

  it('restarts a service that exits unexpectedly, logging why, and stops a crash loop with one line', async () => {
    let loop = '';
    const service = new SupervisedService(root, { name: 'crashy', port: await freePort(), entry: 'crash.mjs' }, { PATH: process.env['PATH'] }, { firstDelayMs: 10, maxDelayMs: 50, maxCrashes: 5, windowMs: 60_000 }, (line) => (loop = line), async () => undefined);
    await waitFor(() => loop || undefined, { timeoutMs: 60_000, what: 'the crash loop to be reported' });
    expect(loop).toBe('crashy crashed 6 times within 60 s (last: code 3); not restarting it again: stopping everything');
    const restarts = lines.filter((l) => /crashy exited unexpectedly \(code 3\); restarting in \d+ ms \(crash \d of at most 5 per 60 s\)/.test(l));
    expect(restarts).toHaveLength(5);
    // Backoff: 10, 20, 40, then the 50 ms ceiling.
    expect(restarts.map((l) => Number(/restarting in (\d+) ms/.exec(l)![1]))).toEqual([10, 20, 40, 50, 50]);
    await service.stop();
  });

  it('a service killed with SIGKILL is back by itself (a new process, ready); once stopped it stays stopped', async () => {
    const spec = { name: 'steady', port: await freePort(), entry: 'server.mjs' };
    const service = new SupervisedService(root, spec, { PATH: process.env['PATH'] }, { firstDelayMs: 10, maxDelayMs: 50, maxCrashes: 5, windowMs: 60_000 }, () => undefined, async () => undefined);
    await waitFor(async () => (await readiness(spec)).ok, { timeoutMs: 30_000, what: 'the service to be ready' });
    const first = service.pid!;
    process.kill(first, 'SIGKILL');
    await waitFor(() => lines.some((l) => /launcher\s*\| steady is back \(pid \d+\): ready [\d.]+ s after it went down/.test(l)), { timeoutMs: 30_000, what: 'the restart to be announced' });
    expect(lines.join('')).toMatch(/steady exited unexpectedly \(SIGKILL: killed from outside, e\.g\. by the kernel when out of memory\); restarting in 10 ms/);
    expect(service.pid).not.toBe(first);
    expect((await readiness(spec)).ok).toBe(true);

    const second = service.pid!;
    await service.stop();
    expect(alive(second)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(service.pid).toBe(second);
    expect((await readiness(spec)).ok).toBe(false);
  });
});

describe('an operator\'s Redis (REDIS_URL) is checked at start', () => {
  it.each([
    [['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'], [/has appendonly no: a restart of that Redis loses accepted deploys/, /has maxmemory-policy allkeys-lru: under memory pressure it may evict queued deploys/]],
    [['--appendonly', 'yes', '--maxmemory-policy', 'noeviction'], []],
  ])('redis-server %j → the warnings it deserves', async (args, expected) => {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-operator-redis-'));
    const port = await freePort();
    const server = startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...args]);
    try {
      await server.waitForOutput(/Ready to accept connections/, 20_000);
      const warnings = await warnUnlessDurable(`redis://127.0.0.1:${port}`);
      expect(warnings).toHaveLength(expected.length);
      expected.forEach((pattern, i) => expect(warnings[i]).toMatch(pattern));
    } finally {
      await server.stop('SIGTERM', 10_000);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
