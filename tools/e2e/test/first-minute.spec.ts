/**
 * The first minute after release is watched (issue 30): against the platform as `pnpm start` runs
 * it (nginx data plane, runtime supervisor, sandboxed apps), four applications deployed side by
 * side — one that crashes 5 s after it goes live, one that answers 500 on a path, one that writes
 * errors (and a secret) to stderr, one healthy — and each deployment's hazards read once the
 * minute is over. The 500s one is deployed with `slipway deploy --watch`, which waits for the
 * minute and prints what was seen.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_MAIN, CLI_OWN_SEQUENCES, PTY_LINE_ENDINGS, runForBytes, terminalControls, waitFor, type PlatformAccount } from '@slipway/testing';
import { chromium } from 'playwright-core';
import { Platform, ROOT } from './support/platform.js';

type Hazard = { code: string; message?: string; detail?: string; count?: number; restarts?: number };
type Task = { taskId: string; status: string; finishedAt: string | null; hazards: Hazard[] };

const PAYMENT_KEY = 'sk_live_first_minute_5b1f0c9e7d';
const RUNTIME_CODES = ['runtime_crashed', 'runtime_5xx', 'runtime_errors'];
/** The edge's window (RELEASE_WATCH_MS's default) and how long after it its hazards may take to land. */
const WINDOW_MS = 60_000;
const LANDING_MS = 15_000;

const SERVERS = {
  crash: `import http from 'node:http';
http.createServer((req, res) => res.end('up')).listen(process.env.PORT);
// Dies 5 s after it starts (and again after each restart).
setTimeout(() => { console.log('about to fail: the queue is gone'); process.exit(3); }, 5000);
`,
  fivexx: `import http from 'node:http';
http.createServer((req, res) => {
  if (req.url.startsWith('/boom')) { res.statusCode = 500; return res.end('boom'); }
  res.end('fine');
}).listen(process.env.PORT);
`,
  errors: `import http from 'node:http';
http.createServer((req, res) => res.end('ok')).listen(process.env.PORT);
console.log('stdout is not an error: ' + process.env.PAYMENT_KEY.length);
console.error('error: payments refused the key ' + process.env.PAYMENT_KEY);
console.error('\\u001b[31merror: retrying in 5 s\\u001b[0m');
console.error(new Error('payments unreachable'));
process.emitWarning('a warning is not an error');
`,
  healthy: `import http from 'node:http';
http.createServer((req, res) => res.end('healthy')).listen(process.env.PORT);
`,
};
type Kind = keyof typeof SERVERS;

async function project(kind: Kind): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `slipway-e2e-watch-${kind}-`));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `watch-${kind}`, private: true, type: 'module', scripts: { start: 'node server.js' } }));
  await writeFile(join(dir, 'server.js'), SERVERS[kind]);
  return dir;
}

describe('the first minute after release', () => {
  let platform: Platform;
  const accounts = {} as Record<Kind, PlatformAccount>;
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await Platform.start('watch');
    for (const kind of Object.keys(SERVERS) as Kind[]) accounts[kind] = await platform.bootstrap(`watch-${kind}@example.com`, `Watch ${kind}`);
    await platform.setSecrets(accounts.errors, { PAYMENT_KEY });
  }, 240_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  /** A dashboard session of the account's owner (`admin bootstrap`'s owner claims the account by signing up with its email). */
  async function session(kind: Kind): Promise<string> {
    const response = await fetch(`http://127.0.0.1:${platform.ports.gateway}/dashboard/api/session/sign-up`, {
      method: 'POST',
      headers: { origin: `http://localhost:${platform.ports.gateway}`, 'x-slipway-csrf': '1', 'content-type': 'application/json' },
      body: JSON.stringify({ email: `watch-${kind}@example.com`, password: 'correct horse battery', name: kind }),
    });
    expect(response.status).toBeLessThan(300);
    return response.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
  }

  type Series = {
    summary: {
      requests: number;
      byClass: Record<string, number>;
      latencyMs: Record<string, number | null>;
      cpu: number;
      memoryBytes: number | null;
      restarts: number;
    };
    points: unknown[];
  };
  async function metrics(cookie: string, kind: Kind, range = 'hour'): Promise<{ status: number; body: Series }> {
    const response = await fetch(
      `http://127.0.0.1:${platform.ports.gateway}/dashboard/api/applications/${accounts[kind].applicationId}/metrics?range=${range}`,
      { headers: { cookie } },
    );
    return { status: response.status, body: (await response.json()) as Series };
  }

  /** The task's hazards once its window is over (a runtime hazard landing earlier ends the wait). */
  async function settled(account: PlatformAccount, taskId: string, expect?: string): Promise<Task> {
    const first = (await platform.task(account, taskId)) as unknown as Task;
    const end = Date.parse(first.finishedAt!) + WINDOW_MS + LANDING_MS;
    for (;;) {
      const task = (await platform.task(account, taskId)) as unknown as Task;
      if ((expect && task.hazards.some((h) => h.code === expect)) || Date.now() > end) return task;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  it('turns crashes, 5xx answers and stderr errors into hazards of the succeeded task, and prints them with deploy --watch', async () => {
    const started = Date.now();
    const paths = Object.fromEntries(await Promise.all((Object.keys(SERVERS) as Kind[]).map(async (k) => [k, await project(k)] as const))) as Record<
      Kind,
      string
    >;
    dirs.push(...Object.values(paths));

    // --watch for the 500s, on a terminal (a pty): the CLI waits for the minute while requests hit /boom three times.
    const cliEnv = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      SLIPWAY_HOME: platform.home,
      SLIPWAY_URL: `http://127.0.0.1:${platform.ports.gateway}`,
      SLIPWAY_POLL_INTERVAL_MS: '200',
      NO_COLOR: '1',
      TERM: 'xterm',
      ...platform.cliEnv(accounts.fivexx),
    };
    const watched = runForBytes([process.execPath, CLI_MAIN, 'deploy', paths.fivexx, '--watch'], { env: cliEnv, pty: true, timeoutMs: 600_000 });
    const [crash, errors, healthy] = await Promise.all([
      platform.deploy(accounts.crash, paths.crash),
      platform.deploy(accounts.errors, paths.errors),
      platform.deploy(accounts.healthy, paths.healthy),
    ]);
    for (const task of [crash, errors, healthy]) expect(task).toMatchObject({ status: 'succeeded' });
    await waitFor(async () => (await platform.viaEdge(accounts.fivexx.slug, '/')).body === 'fine', { timeoutMs: 300_000, what: 'the 500s app live' });
    for (let i = 0; i < 3; i++) expect((await platform.viaEdge(accounts.fivexx.slug, `/boom?token=${PAYMENT_KEY}`)).status).toBe(500);
    for (let i = 0; i < 3; i++) expect((await platform.viaEdge(accounts.healthy.slug, '/')).status).toBe(200);
    console.log(`four deploys live ${Math.round((Date.now() - started) / 1000)} s after the start`);

    const crashed = await settled(accounts.crash, crash.taskId!, 'runtime_crashed');
    const stderr = await settled(accounts.errors, errors.taskId!, 'runtime_errors');
    const quiet = await settled(accounts.healthy, healthy.taskId!);
    const run = await watched;
    const cli = { code: run.code, stdout: run.stdout.toString('utf8') };
    console.log(
      `hazards read ${Math.round((Date.now() - started) / 1000)} s after the start:\n${JSON.stringify({ crashed: crashed.hazards, stderr: stderr.hazards, quiet: quiet.hazards }, null, 1)}\n--- deploy --watch:\n${cli.stdout}`,
    );

    // A crash 5 s after going live: runtime_crashed, the task still succeeded, its last output quoted.
    expect(crashed.status).toBe('succeeded');
    const crashHazard = crashed.hazards.find((h) => h.code === 'runtime_crashed');
    expect(crashHazard).toMatchObject({ severity: 'high' });
    expect(crashHazard!.count).toBeGreaterThanOrEqual(1);
    expect(crashHazard!.detail).toContain('about to fail: the queue is gone');
    expect(crashHazard!.detail).not.toMatch(/^npm /m);

    // stderr error lines, counted without stdout, stack frames or Node's warnings; the secret redacted.
    expect(stderr.status).toBe('succeeded');
    const errorHazard = stderr.hazards.find((h) => h.code === 'runtime_errors');
    expect(errorHazard).toMatchObject({ count: 3 });
    expect(errorHazard!.detail).toBe('error: payments refused the key [redacted:PAYMENT_KEY]\nerror: retrying in 5 s\nError: payments unreachable');
    expect(JSON.stringify(stderr.hazards)).not.toContain(PAYMENT_KEY);
    expect(stderr.hazards.map((h) => h.code)).not.toContain('runtime_crashed');

    // A healthy release: none.
    expect(quiet.status).toBe('succeeded');
    expect(quiet.hazards.filter((h) => RUNTIME_CODES.includes(h.code))).toEqual([]);

    // deploy --watch waited for the minute and printed the 500s, their count and the path (the query, with its secret, left out).
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/watching its first 60 s for crashes, 5xx answers and errors/);
    expect(cli.stdout).toMatch(/runtime_5xx: The application answered 3 requests with a 5xx status/);
    expect(cli.stdout).toContain('detail: GET /boom → 500 (3×)');
    expect(terminalControls(run.stdout, [...CLI_OWN_SEQUENCES, ...PTY_LINE_ENDINGS])).toEqual([]);
    expect(cli.stdout).not.toContain(PAYMENT_KEY);
    expect(cli.stdout).not.toContain('runtime_crashed');

    // Metrics, as the edge counted them (nginx's metrics log → Redis → the owners' API).
    const fivexxOwner = await session('fivexx');
    const counted = await metrics(fivexxOwner, 'fivexx');
    const day = await metrics(fivexxOwner, 'fivexx', 'day');
    const crashOwner = await session('crash');
    const crashMetrics = await metrics(crashOwner, 'crash');
    console.log(`metrics: ${JSON.stringify({ fivexx: counted.body.summary, fivexxDay: day.body.summary, crash: crashMetrics.body.summary })}`);
    expect(counted.status).toBe(200);
    expect(counted.body.points).toHaveLength(60);
    expect(counted.body.summary.byClass['5xx']).toBe(3);
    expect(counted.body.summary.byClass['2xx']).toBeGreaterThanOrEqual(1);
    expect(counted.body.summary.latencyMs['p50']).not.toBeNull();
    expect(counted.body.summary.memoryBytes).toBeGreaterThan(0);
    expect(day.body.points).toHaveLength(144);
    expect(day.body.summary.requests).toBe(counted.body.summary.requests);
    expect(crashMetrics.body.summary.restarts).toBeGreaterThanOrEqual(1);
    expect(crashMetrics.body.summary.cpu).toBeGreaterThan(0);
    // Another owner's application: 404, as for everything of it.
    expect((await metrics(crashOwner, 'fivexx')).status).toBe(404);

    // slipway metrics with the application's project API key (the CLI learns the application from
    // the key); another application's key gets 404.
    const byKey = await platform.cli(['metrics', '--json'], { SLIPWAY_API_KEY: accounts.fivexx.apiKey });
    expect(byKey.code).toBe(0);
    const keySeries = JSON.parse(byKey.stdout) as Series;
    expect(keySeries.summary.byClass['5xx']).toBe(3);
    expect(keySeries.summary.requests).toBeGreaterThanOrEqual(counted.body.summary.requests);
    const refused = await platform.cli(['metrics', '--json', '--application', accounts.fivexx.applicationId], { SLIPWAY_API_KEY: accounts.crash.apiKey });
    expect([refused.code, JSON.parse(refused.stdout)]).toEqual([1, expect.objectContaining({ code: 'not_found', status: 404 })]);

    // The dashboard's Metrics tab in Chromium: the summary and a chart with the requests.
    await lookInBrowser(fivexxOwner, accounts.fivexx.applicationId);
  }, 900_000);

  async function lookInBrowser(cookie: string, applicationId: string): Promise<void> {
    const base = `http://localhost:${platform.ports.gateway}`;
    const profile = await mkdtemp(join(tmpdir(), 'slipway-chromium-'));
    dirs.push(profile);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      viewport: { width: 1280, height: 1100 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    try {
      await context.addCookies(
        cookie.split('; ').map((pair) => ({ name: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1), url: base })),
      );
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${base}/apps/${applicationId}/metrics`);
      const summary = page.getByTestId('metrics-summary');
      await summary.waitFor({ timeout: 30_000 });
      expect(await summary.textContent()).toContain('5xx 3');
      await expect(page.getByRole('img', { name: /^Requests per minute: [1-9]\d* requests$/ }).count()).resolves.toBe(1);
      expect(await page.locator('figure.chart svg rect').count()).toBeGreaterThan(0);
      const shots = join(ROOT, 'test-output/screenshots/e2e');
      await mkdir(shots, { recursive: true });
      await page.screenshot({ path: join(shots, 'metrics-tab.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }
});
