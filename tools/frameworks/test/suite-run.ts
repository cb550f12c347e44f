/**
 * Runs the suite's deploys: one platform (as `pnpm start` runs it), one owner and application per
 * fixture (`slipway admin bootstrap`), `slipway deploy <dir> --json` for each, at most
 * `concurrency` at a time (the build worker runs that many jobs at once), every wait bounded.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES as FIXTURE_ROOT, LaunchedPlatform, waitFor, type HttpResult, type PlatformAccount, type PlatformTask } from '@slipway/testing';
import type { FrameworkFixture } from './fixtures.js';

const OVERLAYS = join(import.meta.dirname, '..', 'fixtures', 'overlays');

/**
 * Operator settings of `pnpm start` (apps/build-worker and apps/edge config) the suite changes:
 * builds run `concurrency` at a time; a release may take 5 minutes to hand over and its server 2
 * to answer, instead of 1 minute and 30 s. The suite asks whether starters work through the
 * platform, on a 2-core machine shared with other suites (load 20+), where a whole Next.js
 * project (hundreds of MB of node_modules until releases are pruned) takes minutes to pack and
 * extract; how fast a release goes live is bench/time-to-live's question, not this suite's.
 */
const OPERATOR_SETTINGS = (concurrency: number): Record<string, string> => ({
  WORKER_CONCURRENCY: String(concurrency),
  RELEASE_TIMEOUT_MS: String(5 * 60_000),
  HEALTH_TIMEOUT_MS: String(2 * 60_000),
});

export interface Deployed {
  account: PlatformAccount;
  task: PlatformTask;
  /** Wall time of `slipway deploy`, for the log only (never asserted). */
  ms: number;
}

/** Fixtures picked by `FRAMEWORKS=name,name` (all when unset); an unknown name is an error, not an empty run. */
export function selected(all: FrameworkFixture[], filter = process.env['FRAMEWORKS']): FrameworkFixture[] {
  if (!filter) return all;
  const names = filter
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !all.some((f) => f.name === n));
  if (unknown.length) throw new Error(`FRAMEWORKS names unknown fixtures: ${unknown.join(', ')}; known: ${all.map((f) => f.name).join(', ')}`);
  return all.filter((f) => names.includes(f.name));
}

export class SuiteRun {
  private readonly results = new Map<string, Promise<Deployed>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private bootstraps: Promise<unknown> = Promise.resolve();

  constructor(
    readonly platform: LaunchedPlatform,
    private readonly concurrency: number,
    private readonly deployTimeoutMs: number,
  ) {}

  static async start(concurrency: number, deployTimeoutMs: number): Promise<SuiteRun> {
    const platform = await LaunchedPlatform.start('suite', { suite: 'frameworks', env: OPERATOR_SETTINGS(concurrency) });
    return new SuiteRun(platform, concurrency, deployTimeoutMs);
  }

  /** Starts every fixture's deploy (queued behind the concurrency limit); `result` awaits one. */
  startAll(fixtures: FrameworkFixture[]): void {
    for (const fixture of fixtures) {
      const result = this.limited(() => this.deploy(fixture));
      result.catch(() => undefined); // awaited (and reported) by the fixture's own test
      this.results.set(fixture.name, result);
    }
  }

  result(name: string): Promise<Deployed> {
    const result = this.results.get(name);
    if (!result) throw new Error(`${name} was not deployed`);
    return result;
  }

  /** A page through the edge, retried until it answers `status` (the route reaches the edge by pub/sub). */
  async page(slug: string, path: string, status: number, headers: Record<string, string> = {}): Promise<HttpResult> {
    let last: HttpResult | undefined;
    try {
      return await waitFor(
        async () => {
          last = await this.platform.viaEdge(slug, path, 20_000, headers);
          return last.status === status ? last : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500, what: `${slug}${path} to answer ${status}` },
      );
    } catch {
      return last ?? { status: 0, headers: {}, body: 'no answer' };
    }
  }

  async stop(): Promise<void> {
    await this.platform.stop();
  }

  private async deploy(fixture: FrameworkFixture): Promise<Deployed> {
    const tag = randomBytes(3).toString('hex');
    // One bootstrap at a time, as an operator types them (three at once once failed with an empty error).
    const bootstrap = this.bootstraps.catch(() => undefined).then(() => this.platform.bootstrap(`${fixture.name}-${tag}@frameworks.example`, fixture.name));
    this.bootstraps = bootstrap;
    const account = await bootstrap;
    let dir = join(FIXTURE_ROOT, fixture.dir);
    if (fixture.overlay) {
      dir = await mkdtemp(join(tmpdir(), `frameworks-${fixture.name}-`));
      await cp(join(FIXTURE_ROOT, fixture.dir), dir, { recursive: true });
      await cp(join(OVERLAYS, fixture.overlay), dir, { recursive: true });
    }
    try {
      const started = Date.now();
      // A monorepo's app is chosen with --root-directory (the CLI's flag for slipway.json's rootDirectory).
      const options = fixture.rootDirectory ? ['--root-directory', fixture.rootDirectory] : [];
      const task = await this.platform.deploy(account, dir, this.deployTimeoutMs, options);
      return { account, task, ms: Date.now() - started };
    } finally {
      if (fixture.overlay) await rm(dir, { recursive: true, force: true });
    }
  }

  private async limited<T>(fn: () => Promise<T>): Promise<T> {
    while (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/** The failed step's log tail and the error, for a failure message a reader can act on. */
export function failureReport(task: PlatformTask): string {
  const failed = task.steps?.find((s) => s.status === 'failed');
  return JSON.stringify({ status: task.status, error: task.error, step: failed?.name, log: failed?.log?.slice(-2500) }, null, 1);
}
