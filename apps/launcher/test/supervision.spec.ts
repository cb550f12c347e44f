/**
 * The launcher's supervision of one service, with real child processes (tiny Node scripts in a
 * temporary root): an unexpected exit is restarted and logged with its reason, a crash loop stops
 * with one line, a stopped service is never restarted. And the start-up check of an operator's
 * Redis (real redis-server processes): a warning per setting that can lose queued deploys.
 */
import { request } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdListeningSocket } from '@slipway/service-kit';
import { freePort, startProcess, waitFor } from '@slipway/testing';
import { warnUnlessDurable } from '../src/redis.js';
import { readiness } from '../src/services.js';
import { CrashWindow, SupervisedService } from '../src/supervisor.js';
import { alive } from './support.js';

const SERVER = `
import { createServer } from 'node:http';
createServer((req, res) => res.writeHead(req.url === '/health/ready' ? 200 : 404).end()).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** A server on the socket the launcher hands down (SLIPWAY_LISTEN_FDS=http=3), answering its pid; it says when it accepts, as startHttpApp does. */
const SHARED = `
import { createServer } from 'node:http';
const fd = Number(/http=(\\d+)/.exec(process.env.SLIPWAY_LISTEN_FDS ?? '')[1]);
createServer((req, res) => res.end(String(process.pid))).listen({ fd }, () => console.log('listening on the inherited socket (fd ' + fd + ') of ' + process.env.SLIPWAY_SERVICE_PROCESSES + ' processes'));
`;

/** A service with a child of its own in its process group (a worker, a helper), whose pid it writes down. */
const PARENT = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
writeFileSync(process.env.CHILD_PID_FILE, String(child.pid));
createServer((req, res) => res.writeHead(200).end()).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** GET / on a new connection each time (as independent clients do): the answering pid, or '' when refused or cut. */
function pidAt(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => (body += c))
        .on('end', () => resolve(body))
        .on('error', () => resolve(''));
    });
    req.on('error', () => resolve(''));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

describe('launcher supervision', () => {
  let root: string;
  let lines: string[];
  const original = process.stdout.write.bind(process.stdout);
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-supervision-'));
    await writeFile(join(root, 'crash.mjs'), 'setTimeout(() => process.exit(3), 20);\n');
    await writeFile(join(root, 'server.mjs'), SERVER);
    await writeFile(join(root, 'shared.mjs'), SHARED);
    await writeFile(join(root, 'parent.mjs'), PARENT);
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
    const service = new SupervisedService(
      root,
      { name: 'crashy', port: await freePort(), entry: 'crash.mjs' },
      { PATH: process.env['PATH'] },
      { firstDelayMs: 10, maxDelayMs: 50, maxCrashes: 5, windowMs: 60_000 },
      (line) => (loop = line),
      async () => undefined,
    );
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
    const service = new SupervisedService(
      root,
      spec,
      { PATH: process.env['PATH'] },
      { firstDelayMs: 10, maxDelayMs: 50, maxCrashes: 5, windowMs: 60_000 },
      () => undefined,
      async () => undefined,
    );
    await waitFor(async () => (await readiness(spec)).ok, { timeoutMs: 30_000, what: 'the service to be ready' });
    const first = service.pid!;
    process.kill(first, 'SIGKILL');
    await waitFor(() => lines.some((l) => /launcher\s*\| steady is back \(pid \d+\): ready [\d.]+ s after it went down/.test(l)), {
      timeoutMs: 30_000,
      what: 'the restart to be announced',
    });
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

describe('launcher supervision: several processes of one service, and what a crash leaves', () => {
  let root: string;
  let lines: string[];
  const original = process.stdout.write.bind(process.stdout);
  const fast = { firstDelayMs: 10, maxDelayMs: 50, maxCrashes: 5, windowMs: 60_000 };
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-supervision-'));
    await writeFile(join(root, 'crash.mjs'), 'setTimeout(() => process.exit(3), 20);\n');
    await writeFile(join(root, 'shared.mjs'), SHARED);
    await writeFile(join(root, 'parent.mjs'), PARENT);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
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

  it('two processes on a socket the launcher holds: kill -9 of either costs no request, and each is back by itself', async () => {
    const held = await holdListeningSocket(0, '127.0.0.1');
    const spec = {
      name: 'pair',
      port: held.port,
      entry: 'shared.mjs',
      sockets: [{ name: 'http', host: '127.0.0.1', port: held.port }],
      listening: /listening on the inherited socket/,
    };
    const crashes = new CrashWindow('pair', fast.windowMs);
    const group = { crashes, sockets: [held], processes: 2 };
    const pair = [
      new SupervisedService(
        root,
        spec,
        { PATH: process.env['PATH'] },
        fast,
        () => undefined,
        async () => undefined,
        group,
      ),
      new SupervisedService(
        root,
        { ...spec, name: 'pair-2' },
        { PATH: process.env['PATH'] },
        fast,
        () => undefined,
        async () => undefined,
        group,
      ),
    ];
    try {
      await waitFor(async () => (await Promise.all(pair.map((p) => p.readiness()))).every((r) => r.ok) || undefined, {
        timeoutMs: 30_000,
        what: 'both processes to accept',
      });
      expect(lines.join('')).toMatch(/of 2 processes/);
      let failed = 0;
      const answered = new Set<string>();
      for (const [i, victim] of [
        [0, pair[0]!],
        [1, pair[1]!],
      ] as const) {
        const pid = victim.pid!;
        for (let n = 0; n < 150; n++) {
          if (n === 20) process.kill(pid, 'SIGKILL');
          const by = await pidAt(held.port);
          if (by) answered.add(by);
          else failed++;
        }
        await waitFor(() => lines.some((l) => new RegExp(`${victim.name} is back \\(pid ${victim.pid}\\)`).test(l)) || undefined, {
          timeoutMs: 30_000,
          what: `${victim.name} to be back`,
        });
        expect(victim.pid).not.toBe(pid);
        expect(crashes.count).toBe(i + 1);
      }
      expect(failed).toBe(0);
      expect(answered.size).toBeGreaterThanOrEqual(3);
    } finally {
      await Promise.all(pair.map((p) => p.stop()));
      held.close();
    }
  }, 60_000);

  it('crashes of all the processes of a service count together towards the crash loop', async () => {
    let loop = '';
    const crashes = new CrashWindow('crashy', fast.windowMs);
    const spec = { name: 'crashy', port: await freePort(), entry: 'crash.mjs' };
    const both = [
      new SupervisedService(
        root,
        spec,
        { PATH: process.env['PATH'] },
        fast,
        (line) => (loop ||= line),
        async () => undefined,
        { crashes, processes: 2 },
      ),
      new SupervisedService(
        root,
        { ...spec, name: 'crashy-2' },
        { PATH: process.env['PATH'] },
        fast,
        (line) => (loop ||= line),
        async () => undefined,
        { crashes, processes: 2 },
      ),
    ];
    await waitFor(() => loop || undefined, { timeoutMs: 60_000, what: 'the crash loop to be reported' });
    expect(loop).toMatch(/^crashy crashed 6 times within 60 s \(last: (crashy-2, )?code 3\); not restarting it again: stopping everything$/);
    expect(lines.filter((l) => /crashy(-2)? exited unexpectedly/.test(l))).toHaveLength(5);
    await Promise.all(both.map((s) => s.stop()));
  });

  it("a crashed service's whole process group is killed before it is restarted: no child of the old instance is left", async () => {
    const file = join(root, 'child.pid');
    const spec = { name: 'parent', port: await freePort(), entry: 'parent.mjs' };
    const service = new SupervisedService(
      root,
      spec,
      { PATH: process.env['PATH'], CHILD_PID_FILE: file },
      fast,
      () => undefined,
      async () => undefined,
    );
    try {
      await waitFor(async () => (await readiness(spec)).ok || undefined, { timeoutMs: 30_000, what: 'the service to be ready' });
      const child = Number(await readFile(file, 'utf8'));
      expect(alive(child)).toBe(true);
      process.kill(service.pid!, 'SIGKILL');
      await waitFor(() => lines.some((l) => /parent is back/.test(l)) || undefined, { timeoutMs: 30_000, what: 'the restart' });
      await waitFor(() => !alive(child) || undefined, { timeoutMs: 5000, what: `the old instance's child ${child} to be gone` });
      expect(lines.join('')).toMatch(/parent: killed what was left of its old process group \(pgid \d+\)/);
    } finally {
      await service.stop();
      const left = Number(await readFile(file, 'utf8').catch(() => '0'));
      if (left && alive(left)) process.kill(left, 'SIGKILL');
    }
  });
});

describe("an operator's Redis (REDIS_URL) is checked at start", () => {
  it.each([
    [
      ['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'],
      [
        /has appendonly no: a restart of that Redis loses accepted deploys/,
        /has maxmemory-policy allkeys-lru: under memory pressure it may evict queued deploys/,
      ],
    ],
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
