/**
 * The start queue on real time: starts are real timers, and how many run at once is counted by
 * the starts themselves (not read from the queue). Then NodeApps with the queue, a real usage
 * meter (request counts in files, as nginx writes them) and a driver that runs a real HTTP server
 * per release: the edge's bring-up starts the most used first, a bounded number at a time, a
 * request bumps a waiting app, and a release the runtime already runs is claimed at once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReleaseToRun, RunningRelease, RuntimeDriver } from '@slipway/runtime';
import { NodeApps } from './node-apps.js';
import { StartQueue } from './start-queue.js';
import { UsageMeter } from './usage-meter.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts starts in flight as they happen: the independent witness of the bound. */
class Witness {
  now = 0;
  peak = 0;
  readonly order: string[] = [];
  async start(name: string, ms: number): Promise<string> {
    this.order.push(name);
    this.now += 1;
    this.peak = Math.max(this.peak, this.now);
    try {
      await sleep(ms);
      return name;
    } finally {
      this.now -= 1;
    }
  }
}

const scores: Record<string, number> = { a: 50, b: 40, c: 30, d: 20, e: 10, f: 5, g: 0, h: 0 };
const byScore = (x: string, y: string) => (scores[y] ?? 0) - (scores[x] ?? 0);

describe('StartQueue', () => {
  it('runs at most `concurrency` starts at once, most used first, and all of them in the end', async () => {
    const queue = new StartQueue({ concurrency: 3, compare: byScore });
    const witness = new Witness();
    const began = performance.now();
    // Asked for in the reverse of their use: the queue orders them before the first begins.
    const names = ['h', 'g', 'f', 'e', 'd', 'c', 'b', 'a'];
    const done = await Promise.all(names.map((n) => queue.run(n, () => witness.start(n, 60))));
    const elapsed = performance.now() - began;
    process.stdout.write(`start-queue: 8 starts of 60 ms, 3 at a time: ${Math.round(elapsed)} ms (serial would be 480 ms)\n`);
    expect(done).toEqual(names);
    expect(witness.peak).toBe(3);
    expect(queue.peak).toBe(3);
    expect(witness.order).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'h', 'g']);
    // Three rounds at the least; far below the 8 s a stuck queue would need (a bound, not a benchmark).
    expect(elapsed).toBeGreaterThanOrEqual(3 * 60 - 5);
    expect(elapsed).toBeLessThan(8000);
  });

  it('a request for a waiting app puts it next; a deploy (urgent) goes before the background', async () => {
    const queue = new StartQueue({ concurrency: 1, compare: byScore });
    const witness = new Witness();
    const all = ['a', 'b', 'c', 'h'].map((n) => queue.run(n, () => witness.start(n, 40)));
    await sleep(10); // 'a' runs, the rest wait
    expect(queue.bump('h')).toBe(true);
    expect(queue.bump('nobody')).toBe(false);
    const deploy = queue.run('g', () => witness.start('g', 40), { urgent: true });
    await Promise.all([...all, deploy]);
    expect(witness.order).toEqual(['a', 'h', 'g', 'b', 'c']);
    expect(witness.peak).toBe(1);
  });

  it('a release already running is claimed at once, outside the count, while cold starts hold every slot', async () => {
    const queue = new StartQueue({ concurrency: 1, compare: byScore });
    const witness = new Witness();
    const cold = [queue.run('a', () => witness.start('a', 400)), queue.run('b', () => witness.start('b', 400))];
    await sleep(20);
    const began = performance.now();
    await queue.run('c', () => sleep(5).then(() => 'adopted'), { immediate: true });
    const waited = performance.now() - began;
    process.stdout.write(`start-queue: adoption behind two 400 ms cold starts waited ${Math.round(waited)} ms\n`);
    expect(waited).toBeLessThan(300);
    expect(queue.active).toBe(1);
    expect(queue.queued).toBe(1);
    await Promise.all(cold);
  });

  it('a failed start frees its slot; stopping drops the waiting ones and lets the running one end', async () => {
    const queue = new StartQueue({ concurrency: 1, compare: byScore });
    const failed = queue.run('a', () => Promise.reject(new Error('unhealthy')));
    const next = queue.run('b', () => sleep(30).then(() => 'b'));
    await expect(failed).rejects.toThrow('unhealthy');
    await expect(next).resolves.toBe('b');
    const running = queue.run('c', () => sleep(50).then(() => 'c'));
    const waiting = queue.run('d', () => sleep(50).then(() => 'd'));
    await sleep(10);
    queue.cancelWaiting('the edge is stopping');
    await expect(waiting).rejects.toThrow('the edge is stopping');
    await expect(running).resolves.toBe('c');
    expect(queue.queued).toBe(0);
  });

  it('refuses a concurrency below 1', () => {
    expect(() => new StartQueue({ concurrency: 0, compare: byScore })).toThrow('at least 1');
  });
});

/**
 * A real HTTP server per release; counts its cold starts in flight (the witness) and their order.
 * A release in `running` is handed back at once, as the runtime supervisor does for one it runs.
 */
class HttpReleases implements RuntimeDriver {
  readonly name = 'local' as const;
  readonly order: string[] = [];
  readonly adopted: string[] = [];
  now = 0;
  peak = 0;
  constructor(
    private readonly startMs: number,
    private readonly running: Set<string>,
  ) {}
  async start(release: ReleaseToRun): Promise<RunningRelease> {
    if (this.running.has(release.releaseId)) {
      this.adopted.push(release.applicationId);
      return this.serve(release);
    }
    this.order.push(release.applicationId);
    this.now += 1;
    this.peak = Math.max(this.peak, this.now);
    try {
      await sleep(this.startMs);
      return await this.serve(release);
    } finally {
      this.now -= 1;
    }
  }

  private async serve(release: ReleaseToRun): Promise<RunningRelease> {
    const server: Server = createServer((_req, res) => res.end(release.releaseId));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return {
      releaseId: release.releaseId,
      host: '127.0.0.1',
      port: (server.address() as { port: number }).port,
      logTail: () => '',
      stop: () => new Promise<void>((ok) => server.close(() => ok())),
    };
  }
}

const appId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('NodeApps bring-up through the start queue', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-start-queue-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts the most used first (counts nginx wrote before the restart), 2 at a time; a request bumps one; adoption does not wait', async () => {
    const usage = new UsageMeter(dir, { halfLifeMs: 24 * 3600_000 });
    // Before the restart, nginx counted requests: one byte each.
    await writeFile(usage.logFor(appId(5))!, '\n'.repeat(30));
    await writeFile(usage.logFor(appId(3))!, '\n'.repeat(20));
    await usage.load();
    // App 8's release still runs under the runtime supervisor (an edge restart): adopted, not started.
    const driver = new HttpReleases(80, new Set([`r${appId(8)}`]));
    const queue = new StartQueue({ concurrency: 2, compare: usage.compare });
    const adoptable = new Set([`r${appId(8)}`]);
    const apps = new NodeApps(
      driver,
      100,
      async ({ release: { id: releaseId } }) => ({
        releaseId,
        applicationId: releaseId.slice(1),
        slug: releaseId,
        artifactKey: 'k',
        startCommand: 'x',
        env: {},
      }),
      () => undefined,
      undefined,
      { queue, running: (id) => adoptable.delete(id) },
    );
    const ids = [1, 2, 3, 4, 5, 6, 7, 8].map(appId);
    const began = performance.now();
    const answered: Record<string, number> = {};
    const all = ids.map((id) =>
      apps.activate({ applicationId: id, release: { id: `r${id}` } }, { background: true }).then(() => (answered[id] = performance.now() - began)),
    );
    await sleep(20);
    // A user asks for app 7 while it waits: it starts as soon as a slot frees.
    expect(queue.bump(appId(7))).toBe(true);
    await Promise.all(all);
    try {
      process.stdout.write(`start-queue: 8 releases (1 adopted) of 80 ms, 2 at a time: all answering after ${Math.round(performance.now() - began)} ms\n`);
      // The adopted app answered before the first cold start was done: it waited behind none.
      expect(driver.adopted).toEqual([appId(8)]);
      expect(answered[appId(8)]).toBeLessThan(60);
      // Most used first (5: 30 requests, 3: 20), then the app a request asked for, then the rest.
      expect(driver.order.slice(0, 2)).toEqual([appId(5), appId(3)]);
      expect(driver.order[2]).toBe(appId(7));
      expect(driver.order.slice(3).sort()).toEqual([appId(1), appId(2), appId(4), appId(6)]);
      expect(driver.peak).toBe(2);
      for (const id of ids) expect(await fetch(`http://127.0.0.1:${apps.upstream(id)!.port}/`).then((r) => r.text())).toBe(`r${id}`);
    } finally {
      await apps.stopAll();
    }
  });
});
