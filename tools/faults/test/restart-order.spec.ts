/**
 * A whole-platform restart without a stampede, on the platform as `pnpm start` runs it: ten small
 * Node apps of one owner, two of them given traffic; Ctrl-C; `pnpm start` again with
 * RUNTIME_START_CONCURRENCY=2. What is asserted is observed from outside the edge's code:
 *  - how many apps were starting at once: polling /proc and the runtime's logs every 50 ms, a
 *    release is starting from the poll that first sees a process naming its directory until the
 *    poll that first sees the runtime's `[slipway] healthy N ms after start` line in
 *    runtime/logs/<release>.log; at no moment more than 2 (StartWatcher says why a poll cannot
 *    make two consecutive starts look simultaneous);
 *  - the used apps started before every other (the kernel's start times); a request for an app still waiting its turn gets
 *    503 with Retry-After and bumps it ahead of the other waiting ones;
 *  - every app answers in the end, and the edge prints the time it took.
 * RESTART_ORDER_SETTING=64 gives the platform that setting instead (the limit off) and asserts
 * the same bound of 2: it must then fail (seen: 10 starting at once, each ~25 s).
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fixtureDir } from './support/fixtures.js';
import { waitFor } from '@slipway/testing';
import { LaunchedPlatform } from './support/launched.js';
import type { Account } from './support/platform.js';

const APPS = 10;
/** The bound asserted, and the platform's RUNTIME_START_CONCURRENCY (another only to see the bound fail). */
const LIMIT = 2;
const SETTING = process.env['RESTART_ORDER_SETTING'] ?? String(LIMIT);

/** The fixture without its one dependency: nothing to install, so ten deploys stay quick. */
const SERVER = `import { createServer } from 'node:http';
createServer((req, res) => res.end('app ' + process.env.APP_NAME + ' ' + req.url)).listen(Number(process.env.PORT ?? 3000));
`;
const PACKAGE = JSON.stringify({ name: 'restart-order', private: true, version: '1.0.0', type: 'module', scripts: { start: 'node server.js' } });
const LOCK = JSON.stringify({
  name: 'restart-order',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: { '': { name: 'restart-order', version: '1.0.0' } },
});

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Seconds since boot, the clock of /proc/<pid>/stat's start times. */
async function uptime(): Promise<number> {
  return Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
}

/** The process's start, in seconds since boot (/proc/<pid>/stat, field 22), or undefined when it is gone. */
async function processStart(pid: string): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat ? Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / TICKS : undefined;
}

/** How many `[slipway] healthy … after start` lines the runtime wrote to the release's log so far. */
async function healthyLines(home: string, releaseId: string): Promise<number> {
  const log = await readFile(join(home, 'runtime', 'logs', `${releaseId}.log`), 'utf8').catch(() => '');
  return log.match(/\[slipway\] healthy \d+ ms after start/g)?.length ?? 0;
}

interface Observed {
  /** Poll time (s since boot) a process of the release was first seen / its new healthy line was first seen. */
  seen?: number;
  healthy?: number;
  /** The kernel's start time of its first process (exact to a tick): the order of starts. */
  kernelStart?: number;
}

/**
 * Watches releases start from outside the platform: every 50 ms (bounded in time and count) it
 * looks for new processes naming a release's directory (started after `since`), then for each
 * release's new `healthy` line. A start is counted from the poll that first saw its process to
 * the poll that first saw it healthy. Processes are looked at before logs in each poll, so a
 * start that began after another ended is never seen overlapping it: what is counted at once
 * really was at once (a true overlap shorter than one poll may be missed; a stampede is not).
 */
class StartWatcher {
  readonly observed = new Map<string, Observed>();
  private readonly known = new Set<string>();
  private readonly looks = new Map<string, number>();
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly home: string,
    releaseIds: string[],
    private readonly since: number,
    private readonly baseline: Map<string, number>,
    maxMs = 5 * 60_000,
  ) {
    for (const id of releaseIds) this.observed.set(id, {});
    this.done = (async () => {
      const end = Date.now() + maxMs;
      for (let polls = 0; !this.stopped && Date.now() < end && polls < maxMs / 50; polls++) {
        await this.poll();
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
  }

  private async poll(): Promise<void> {
    const at = await uptime();
    const releases = join(this.home, 'runtime', 'releases');
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid) || this.known.has(pid)) continue;
      const started = await processStart(pid);
      if (started === undefined || started < this.since) {
        this.known.add(pid);
        continue;
      }
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      const id = /\/runtime\/releases\/([0-9a-f-]{36})/.exec(cmdline.includes(releases) ? cmdline : '')?.[1];
      const entry = id ? this.observed.get(id) : undefined;
      // A process caught between fork and exec still shows its parent's command line: looked at again for a few polls.
      const looks = (this.looks.get(pid) ?? 0) + 1;
      this.looks.set(pid, looks);
      if (entry || looks >= 5) this.known.add(pid);
      if (!entry) continue;
      entry.seen ??= at;
      entry.kernelStart = Math.min(entry.kernelStart ?? Infinity, started);
    }
    for (const [id, entry] of this.observed) {
      if (entry.seen === undefined || entry.healthy !== undefined) continue;
      if ((await healthyLines(this.home, id)) > (this.baseline.get(id) ?? 0)) entry.healthy = at;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** The most intervals that overlap at one moment (an end and a start at the same poll: the end first). */
function mostAtOnce(intervals: { from: number; to: number }[]): number {
  const edges = intervals
    .flatMap((i) => [
      { at: i.from, d: 1 },
      { at: i.to, d: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

interface App {
  account: Account;
  name: string;
  releaseId: string;
}

describe('restart of the whole platform: releases come back a bounded number at a time, most used first', () => {
  let platform: LaunchedPlatform;
  const apps: App[] = [];
  let source: string;

  beforeAll(async () => {
    platform = await LaunchedPlatform.start('restart-order');
    source = await fixtureDir('node-server', { 'server.js': SERVER, 'package.json': PACKAGE, 'package-lock.json': LOCK });
    // Several applications of one owner. The first is deployed before the others (the last in line
    // among unused apps: the most recently deployed come first); the others at once.
    const accounts: Account[] = [];
    for (let i = 0; i < APPS; i++) accounts.push(await platform.bootstrap('restart-order@example.com', `Order ${String.fromCharCode(97 + i)}`));
    const deploy = async (account: Account, index: number): Promise<App> => {
      const name = `Order ${String.fromCharCode(97 + index)}`;
      await platform.setSecrets(account, { APP_NAME: name });
      const task = await platform.deploy(account, source, 10 * 60_000);
      if (task.status !== 'succeeded') throw new Error(`deploy of ${name} ended ${task.status}: ${JSON.stringify(task.error)}`);
      const [row] = await platform.query<{ live_release_id: string }>('SELECT live_release_id FROM applications WHERE id = $1', [account.applicationId]);
      return { account, name, releaseId: row!.live_release_id };
    };
    apps.push(await deploy(accounts[0]!, 0));
    apps.push(...(await Promise.all(accounts.slice(1).map((account, i) => deploy(account, i + 1)))));
  }, 15 * 60_000);

  afterAll(async () => {
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it(
    `after Ctrl-C and pnpm start with RUNTIME_START_CONCURRENCY=${SETTING}: at most ${LIMIT} starting at once, the used ones first, a waiting app bumped by a request, all answering, the time printed`,
    async () => {
      // Traffic for two apps deployed early (without it they would come back among the last).
      const used = [apps[1]!, apps[2]!];
      for (const [app, requests] of [
        [used[0]!, 40],
        [used[1]!, 25],
      ] as const) {
        for (let i = 0; i < requests; i++) expect((await platform.viaEdge(app.account.slug, '/')).status).toBe(200);
      }
      // The first deployed app, unused: the last in line unless someone asks for it.
      const asked = apps[0]!;

      const baseline = new Map(await Promise.all(apps.map(async (app) => [app.releaseId, await healthyLines(platform.home, app.releaseId)] as const)));
      const watcher = new StartWatcher(
        platform.home,
        apps.map((a) => a.releaseId),
        await uptime(),
        baseline,
      );
      const stopped = await platform.restart({ RUNTIME_START_CONCURRENCY: SETTING });
      expect(stopped.code).toBe(0);
      process.stdout.write(`restart-order: Ctrl-C → the launcher exited ${stopped.code}\n`);
      const askedAt = await uptime();
      const waiting = await platform.viaEdge(asked.account.slug, '/');
      expect({ status: waiting.status, retryAfter: waiting.headers['retry-after'] }).toEqual({ status: 503, retryAfter: '1' });

      const pattern = /runtime: \d+ releases? answering [\d.]+ s after the edge started[^\n]*/;
      const printed = pattern.exec(await platform.launcher.waitForOutput(pattern, 5 * 60_000))![0];
      process.stdout.write(`restart-order: ${printed}\n`);
      expect(printed).toMatch(new RegExp(`runtime: ${APPS} releases answering [\\d.]+ s after the edge started \\(${SETTING} at a time, most used first\\)`));
      await waitFor(() => [...watcher.observed.values()].every((o) => o.healthy !== undefined) || undefined, {
        timeoutMs: 10_000,
        what: 'every release seen healthy',
      }).catch(() => undefined);
      await watcher.stop();
      for (const app of apps) expect((await platform.viaEdge(app.account.slug, '/')).body).toBe(`app ${app.name} /`);

      const starts = apps.map((app) => {
        const o = watcher.observed.get(app.releaseId)!;
        if (o.seen === undefined || o.healthy === undefined || o.kernelStart === undefined)
          throw new Error(`${app.name}: start not observed (${JSON.stringify(o)})`);
        return { app, from: o.seen, to: o.healthy, kernelStart: o.kernelStart };
      });
      const bySpawn = [...starts].sort((a, b) => a.kernelStart - b.kernelStart);
      const most = mostAtOnce(starts);
      const t0 = bySpawn[0]!.kernelStart;
      process.stdout.write(
        `restart-order: most apps starting at once: ${most} (limit ${LIMIT}, setting ${SETTING}); seen starting (s after the first process): ${bySpawn.map((s) => `${s.app.name.slice(-1)} ${(s.from - t0).toFixed(2)}–${(s.to - t0).toFixed(2)}`).join(', ')}; request for ${asked.name.slice(-1)} at ${(askedAt - t0).toFixed(2)}\n`,
      );

      expect(most).toBeLessThanOrEqual(LIMIT);
      // The used apps were the first to start (the kernel's start times), and the first to answer.
      expect(
        bySpawn
          .slice(0, used.length)
          .map((s) => s.app.name)
          .sort(),
      ).toEqual(used.map((a) => a.name).sort());
      const firstHealthy = (list: typeof starts) => Math.min(...list.map((s) => s.to));
      expect(firstHealthy(starts.filter((s) => used.includes(s.app)))).toBeLessThanOrEqual(firstHealthy(starts.filter((s) => !used.includes(s.app))));
      // The app asked for while it waited started before every other app still waiting then.
      const askedStart = starts.find((s) => s.app === asked)!;
      expect(askedStart.kernelStart).toBeGreaterThan(askedAt);
      const laterOthers = starts.filter((s) => s.app !== asked && !used.includes(s.app) && s.kernelStart > askedAt);
      expect(laterOthers.every((s) => s.kernelStart > askedStart.kernelStart)).toBe(true);
    },
    10 * 60_000,
  );
});
