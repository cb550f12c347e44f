/**
 * A whole-platform restart without a stampede, on the platform as `pnpm start` runs it: ten small
 * Node apps of one owner, two of them given traffic; Ctrl-C; `pnpm start` again with
 * RUNTIME_START_CONCURRENCY=2. What is asserted is observed from outside the edge's code:
 *  - how many apps were starting at once: each release's start is its sandbox's first process
 *    (its start time as the kernel gives it, /proc/<pid>/stat) until the runtime's own log line
 *    `[slipway] healthy N ms after start` (runtime/logs/<release>.log); at no moment more than 2;
 *  - the used apps started before every other; a request for an app still waiting its turn gets
 *    503 with Retry-After and bumps it ahead of the other waiting ones;
 *  - every app answers in the end, and the edge prints the time it took.
 * RESTART_ORDER_SETTING=64 gives the platform that setting instead (the limit off) and asserts
 * the same bound of 2: it must then fail (seen: 10 starting at once, each ~25 s).
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fixtureDir } from './support/fixtures.js';
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
const LOCK = JSON.stringify({ name: 'restart-order', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'restart-order', version: '1.0.0' } } });

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Seconds since boot, the clock of /proc/<pid>/stat's start times. */
async function uptime(): Promise<number> {
  return Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
}

/** When (seconds since boot) the oldest live process naming `needle` started: the release's sandbox leader. */
async function firstProcessStart(needle: string): Promise<number | undefined> {
  let first: number | undefined;
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(needle)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / TICKS;
    first = first === undefined ? started : Math.min(first, started);
  }
  return first;
}

/** The runtime's last `healthy N ms after start` for the release (its log ring's current file). */
async function healthyAfterMs(home: string, releaseId: string): Promise<number | undefined> {
  const log = await readFile(join(home, 'runtime', 'logs', `${releaseId}.log`), 'utf8').catch(() => '');
  const all = [...log.matchAll(/\[slipway\] healthy (\d+) ms after start/g)];
  return all.length ? Number(all[all.length - 1]![1]) : undefined;
}

/** The most intervals that overlap at one moment. */
function mostAtOnce(intervals: { from: number; to: number }[]): number {
  const edges = intervals.flatMap((i) => [{ at: i.from, d: 1 }, { at: i.to, d: -1 }]).sort((a, b) => a.at - b.at || a.d - b.d);
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

  it(`after Ctrl-C and pnpm start with RUNTIME_START_CONCURRENCY=${SETTING}: at most ${LIMIT} starting at once, the used ones first, a waiting app bumped by a request, all answering, the time printed`, async () => {
    // Traffic for two apps deployed early (without it they would come back among the last).
    const used = [apps[1]!, apps[2]!];
    for (const [app, requests] of [[used[0]!, 40], [used[1]!, 25]] as const) {
      for (let i = 0; i < requests; i++) expect((await platform.viaEdge(app.account.slug, '/')).status).toBe(200);
    }
    // The first deployed app, unused: the last in line unless someone asks for it.
    const asked = apps[0]!;

    const stopped = await platform.restart({ RUNTIME_START_CONCURRENCY: SETTING });
    expect(stopped.code).toBe(0);
    process.stdout.write(`restart-order: Ctrl-C → the launcher exited ${stopped.code}\n`);
    const askedAt = await uptime();
    const waiting = await platform.viaEdge(asked.account.slug, '/');
    expect({ status: waiting.status, retryAfter: waiting.headers['retry-after'] }).toEqual({ status: 503, retryAfter: '1' });

    const line = await platform.launcher.waitForOutput(/runtime: \d+ releases? answering [\d.]+ s after the edge started[^\n]*/, 5 * 60_000);
    const printed = /runtime: \d+ releases? answering [\d.]+ s after the edge started[^\n]*/.exec(line)![0];
    process.stdout.write(`restart-order: ${printed}\n`);
    expect(printed).toMatch(new RegExp(`runtime: ${APPS} releases answering [\\d.]+ s after the edge started \\(${SETTING} at a time, most used first\\)`));
    for (const app of apps) expect((await platform.viaEdge(app.account.slug, '/')).body).toBe(`app ${app.name} /`);

    // Each start as the kernel and the runtime saw it.
    const releases = join(platform.home, 'runtime', 'releases');
    const starts = await Promise.all(
      apps.map(async (app) => {
        const from = await firstProcessStart(join(releases, app.releaseId));
        const healthyMs = await healthyAfterMs(platform.home, app.releaseId);
        if (from === undefined || healthyMs === undefined) throw new Error(`${app.name}: no process (${from}) or no healthy line (${healthyMs})`);
        return { app, from, to: from + healthyMs / 1000 };
      }),
    );
    const bySpawn = [...starts].sort((a, b) => a.from - b.from);
    const most = mostAtOnce(starts);
    const t0 = bySpawn[0]!.from;
    process.stdout.write(`restart-order: most apps starting at once: ${most} (limit ${LIMIT}, setting ${SETTING}); starts (s after the first): ${bySpawn.map((s) => `${s.app.name.slice(-1)} ${(s.from - t0).toFixed(2)}–${(s.to - t0).toFixed(2)}`).join(', ')}; request for ${asked.name.slice(-1)} at ${(askedAt - t0).toFixed(2)}\n`);

    expect(most).toBeLessThanOrEqual(LIMIT);
    // The used apps were the first to start, and so the first to answer.
    expect(bySpawn.slice(0, used.length).map((s) => s.app.name).sort()).toEqual(used.map((a) => a.name).sort());
    expect(used.map((a) => a.name)).toContain([...starts].sort((a, b) => a.to - b.to)[0]!.app.name);
    // The app asked for while it waited started before every other app still waiting then.
    const askedStart = starts.find((s) => s.app === asked)!;
    expect(askedStart.from).toBeGreaterThan(askedAt);
    const laterOthers = starts.filter((s) => s.app !== asked && !used.includes(s.app) && s.from > askedAt);
    expect(laterOthers.every((s) => s.from > askedStart.from)).toBe(true);
  }, 10 * 60_000);
});
