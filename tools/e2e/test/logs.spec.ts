/**
 * Runtime logs and live build output (issue 30) against the platform as `pnpm start` runs it: an
 * app that logs a line on each request and on a crash, read with `slipway logs` (history by time
 * and release, JSON shape) and followed with `slipway logs --follow` (a request's line within
 * 1 s); another owner's key gets 404; a deploy's build output reaches `slipway deploy` while
 * the build still runs.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { chromium } from 'playwright-core';
import { CLI_MAIN, waitFor } from '@slipway/testing';
import { Platform, type Account } from './support/platform.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'logs-app');

interface Line {
  time: string;
  stream: string;
  text: string;
  releaseId: string;
}

/** A long-running CLI (deploy, logs --follow): its output as it comes, with the time each line arrived. */
class Watched {
  readonly out: { at: number; line: string }[] = [];
  readonly err: { at: number; line: string }[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(platform: Platform, args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [CLI_MAIN, ...args], {
      env: { PATH: process.env['PATH'], SLIPWAY_URL: `http://127.0.0.1:${platform.ports.gateway}`, SLIPWAY_POLL_INTERVAL_MS: '200', NO_COLOR: '1', ...env },
    });
    for (const [stream, into] of [
      [this.child.stdout, this.out],
      [this.child.stderr, this.err],
    ] as const) {
      let carry = '';
      stream.on('data', (chunk: Buffer) => {
        const text = carry + chunk.toString('utf8');
        const lines = text.split('\n');
        carry = lines.pop()!;
        for (const line of lines) into.push({ at: performance.now(), line });
      });
    }
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** The first line matching `pattern`; fails once the process has exited without printing it (not only at the timeout). */
  find(into: 'out' | 'err', pattern: RegExp | string, timeoutMs = 10_000): Promise<{ at: number; line: string }> {
    const match = () => this[into].find((l) => (typeof pattern === 'string' ? l.line.includes(pattern) : pattern.test(l.line)));
    const found = waitFor(match, { timeoutMs, intervalMs: 5, what: `${pattern} on ${into}` });
    const exited = this.exited.then(async (code) => {
      await new Promise((r) => setTimeout(r, 500)); // the last output still on its way
      return match() ?? Promise.reject(new Error(`the CLI exited (${code}) without printing ${pattern} on ${into}`));
    });
    return Promise.race([found, exited]);
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

describe('runtime logs and live build output', () => {
  let platform: Platform;
  let alice: Account;
  let bob: Account;
  let releaseId: string;
  let taskId: string;
  // No application id: the CLI asks the owners' API which application the key reaches.
  const env = () => ({ SLIPWAY_API_KEY: alice.apiKey });

  beforeAll(async () => {
    platform = await Platform.start('e2e-logs');
    alice = await platform.bootstrap('alice@example.com', 'logs-app');
    bob = await platform.bootstrap('bob@example.com', 'other-app');
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it("shows the build's output while the build runs", async () => {
    const began = performance.now();
    const deploy = new Watched(platform, ['deploy', FIXTURE, '--json'], env());
    const first = await deploy.find('err', 'build: first half done', 240_000);
    const second = await deploy.find('err', 'build: second half done', 60_000);
    expect(await deploy.exited).toBe(0);
    const ended = performance.now();
    const task = JSON.parse(deploy.out.map((l) => l.line).join('\n')) as { taskId: string; status: string };
    expect(task.status).toBe('succeeded');
    taskId = task.taskId;
    process.stdout.write(
      `build output: first line ${Math.round(first.at - began)} ms after the deploy began, second ${Math.round(second.at - first.at)} ms later, the deploy ended ${Math.round(ended - first.at)} ms after the first\n`,
    );
    // The build sleeps 6 s between its two lines: the first arrived while it still ran.
    expect(second.at - first.at).toBeGreaterThan(4000);
    const rows = await platform.query<{ id: string }>('SELECT live_release_id AS id FROM applications WHERE id = $1', [alice.applicationId]);
    releaseId = rows[0]!.id;
  }, 300_000);

  it('keeps each request line with time, stream and release; --json is one object per line', async () => {
    const before = Date.now();
    expect((await platform.viaEdge(alice.slug, '/hello?id=first')).status).toBe(200);
    const result = await waitFor(
      async () => {
        const run = await platform.cli(['logs', '--json'], env());
        return run.stdout.includes('request GET /hello first') ? run : undefined;
      },
      { timeoutMs: 10_000, what: 'the first request line in slipway logs' },
    );
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    const line = lines.find((l) => l.text === 'request GET /hello first')!;
    expect(Object.keys(line).sort()).toEqual(['releaseId', 'stream', 'text', 'time']);
    expect(line).toMatchObject({ stream: 'stdout', releaseId });
    expect(Date.parse(line.time)).toBeGreaterThanOrEqual(before - 1000);
    // The platform's own notes are there too (the start), as `slipway`.
    expect(lines.some((l) => l.stream === 'slipway' && /healthy/.test(l.text))).toBe(true);
  });

  it('searches by time and by release', async () => {
    await new Promise((r) => setTimeout(r, 50));
    const cut = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 50));
    expect((await platform.viaEdge(alice.slug, '/hello?id=second')).status).toBe(200);
    const since = await waitFor(
      async () => {
        const run = await platform.cli(['logs', '--json', '--since', cut], env());
        return run.stdout.includes('second') ? run : undefined;
      },
      { timeoutMs: 10_000, what: 'the second request line' },
    );
    const texts = since.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as Line).text);
    expect(texts).toContain('request GET /hello second');
    expect(texts).not.toContain('request GET /hello first');
    const until = await platform.cli(['logs', '--json', '--until', cut], env());
    expect(until.stdout).toContain('request GET /hello first');
    expect(until.stdout).not.toContain('request GET /hello second');
    const released = await platform.cli(['logs', '--json', '--release', releaseId, '--since', '15m'], env());
    expect(
      released.stdout
        .trim()
        .split('\n')
        .every((l) => (JSON.parse(l) as Line).releaseId === releaseId),
    ).toBe(true);
    // A release of another application: nothing (404, as one that does not exist).
    const rows = await platform.query<{ id: string }>('SELECT id FROM releases WHERE application_id <> $1 LIMIT 1', [alice.applicationId]);
    const foreign = rows[0]?.id ?? '00000000-0000-4000-8000-000000000000';
    const other = await platform.cli(['logs', '--json', '--release', foreign], env());
    expect(other.stdout.trim()).toBe('');
  });

  it('--follow shows a request line within 1 s, and a crash on stderr', async () => {
    const follow = new Watched(platform, ['logs', '--follow', '--json', '--since', '15m', '--limit', '5'], env());
    try {
      // The backlog printed: the stream is open.
      await follow.find('out', '"releaseId"', 15_000);
      const id = `follow-${Date.now()}`;
      const sent = performance.now();
      expect((await platform.viaEdge(alice.slug, `/hello?id=${id}`)).status).toBe(200);
      const seen = await follow.find('out', id, 5000);
      const ms = Math.round(seen.at - sent);
      process.stdout.write(`slipway logs --follow: the request's line arrived ${ms} ms after the request was sent\n`);
      expect(ms).toBeLessThan(1000);
      expect(JSON.parse(seen.line)).toMatchObject({ stream: 'stdout', text: `request GET /hello ${id}`, releaseId });

      await platform.viaEdge(alice.slug, '/crash?id=boom');
      const crash = JSON.parse((await follow.find('out', 'crashing on purpose: boom', 5000)).line) as Line;
      expect(crash).toMatchObject({ stream: 'stderr', releaseId });
      await follow.find('out', /"stream":"slipway".*process exited/, 5000);
    } finally {
      follow.stop();
    }
  });

  it("shows the app's control characters, never sends them to the terminal", async () => {
    // The crash above: the app is back after its restart backoff (about 1 s).
    await waitFor(async () => (await platform.viaEdge(alice.slug, '/evil')).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 250,
      what: 'the app back after its crash',
    });
    const human = await waitFor(
      async () => {
        const run = await platform.cli(['logs', '--since', '1m'], env());
        return run.stdout.includes('evil') ? run : undefined;
      },
      { timeoutMs: 15_000, what: 'the evil line' },
    );
    expect(human.stdout).toContain('evil \\u001b]0;owned\\u0007\\u001b[31mred');
    // eslint-disable-next-line no-control-regex -- the point: no raw control character reaches the terminal
    expect(human.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it("another owner's key gets 404 for the application's logs", async () => {
    const run = await platform.cli(['logs', '--json'], { SLIPWAY_API_KEY: bob.apiKey, SLIPWAY_APPLICATION_ID: alice.applicationId });
    expect(run.code).not.toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ code: 'not_found', status: 404 });
    const follow = await platform.cli(['logs', '--follow', '--json'], { SLIPWAY_API_KEY: bob.apiKey, SLIPWAY_APPLICATION_ID: alice.applicationId }, 20_000);
    expect(JSON.parse(follow.stdout)).toMatchObject({ code: 'not_found', status: 404 });
    // The live build output of alice's deployment: 404 too (and the answer comes at once, not as a stream).
    const api = `http://127.0.0.1:${platform.ports.gateway}/dashboard/api/applications/${alice.applicationId}`;
    const build = await fetch(`${api}/deployments/${taskId}/log/stream`, {
      headers: { authorization: `Bearer ${bob.apiKey}` },
      signal: AbortSignal.timeout(20_000),
    });
    expect(build.status).toBe(404);
    expect(await build.json()).toMatchObject({ code: 'not_found' });
    // alice's own key reaches it (the stream opens).
    const own = new AbortController();
    const stream = await fetch(`${api}/deployments/${taskId}/log/stream`, { headers: { authorization: `Bearer ${alice.apiKey}` }, signal: own.signal });
    expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    own.abort();
    // Without any credential: 401.
    const anonymous = await fetch(`${api}/logs`);
    expect(anonymous.status).toBe(401);
  });

  it('the dashboard Logs tab follows the lines live in a real browser', async () => {
    const profile = await mkdtemp(join(tmpdir(), 'slipway-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      // For whoever reads a failure: what the page said.
      page.on('console', (message) => process.stdout.write(`browser console: ${message.text()}\n`));
      page.on(
        'response',
        (response) =>
          response.url().includes('/logs') && process.stdout.write(`browser: ${response.status()} ${response.headers()['content-type']} ${response.url()}\n`),
      );
      // An exception in the page (a React render or effect) leaves it blank: say so, with where.
      page.on('pageerror', (error) => process.stdout.write(`browser page error: ${error.stack ?? error.message}\n`));
      const base = `http://localhost:${platform.ports.gateway}`;
      await page.goto(base);
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByLabel('Your name').fill('Carol');
      await page.getByLabel('Email').fill('carol@example.com');
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
      // Set-up: the bootstrapped application (an owner without a password) becomes Carol's.
      await platform.query('UPDATE applications SET owner_id = (SELECT id FROM owners WHERE email = $1) WHERE id = $2', [
        'carol@example.com',
        alice.applicationId,
      ]);
      await page.goto(`${base}/apps/${alice.applicationId}/logs`);
      await page.getByTestId('logs-state').getByText('following live').waitFor({ timeout: 15_000 });
      // The backlog (the last hour) is there, and a new request's line arrives while the page stays open.
      await page.getByTestId('runtime-log').getByText('request GET /hello first').waitFor({ timeout: 10_000 });
      const id = `browser-${Date.now()}`;
      const sent = performance.now();
      await platform.viaEdge(alice.slug, `/hello?id=${id}`);
      const shown = page.getByTestId('runtime-log').getByText(`request GET /hello ${id}`);
      await shown.waitFor({ timeout: 5000 });
      process.stdout.write(`dashboard Logs tab: the request's line shown ${Math.round(performance.now() - sent)} ms after the request was sent\n`);
      // Still following (no reconnect on the way), the line as its own row with its stream.
      await expect(page.getByTestId('logs-state').textContent()).resolves.toBe('following live');
      expect(
        await page
          .getByTestId('runtime-log')
          .locator('[data-stream="stdout"]', { hasText: `request GET /hello ${id}` })
          .count(),
      ).toBe(1);
      // The app's terminal escapes shown as text.
      await page.getByTestId('runtime-log').getByText('evil \\u001b]0;owned').waitFor({ timeout: 5000 });
    } finally {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    }
  }, 120_000);
});
