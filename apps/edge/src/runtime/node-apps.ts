import type { RunningRelease, RuntimeDriver } from '@slipway/runtime';
import type { Upstream } from '../proxy/proxy.js';
import type { StartQueue } from './start-queue.js';

interface Live {
  release: RunningRelease;
  inflight: number;
  drained?: () => void;
  /** Made once per release: the proxy path allocates nothing here per request. */
  upstream: Upstream;
}

function live(release: RunningRelease): Live {
  const entry: Live = {
    release,
    inflight: 0,
    upstream: {
      host: release.host,
      port: release.port,
      enter: () => {
        entry.inflight += 1;
      },
      leave: () => {
        entry.inflight -= 1;
        if (entry.inflight === 0) entry.drained?.();
      },
    },
  };
  return entry;
}

/** A prepared release that never went live is stopped after this long. */
const PREPARED_TTL_MS = 10 * 60_000;

interface Prepared {
  applicationId: string;
  release: Promise<RunningRelease>;
  /** Set once it runs: stops it if it never goes live (PREPARED_TTL_MS). */
  timer?: NodeJS.Timeout;
}

/**
 * A data plane in front of this edge (nginx): told after every switch, it resolves once it routes
 * by the new table (rejects when it cannot: the switch is undone); `drained` resolves once what it
 * was still proxying to the old process is done.
 */
export interface SwitchedPlane<R = unknown> {
  switched(): Promise<R>;
  drained(reloaded: R, old: RunningRelease, graceMs: number): Promise<boolean>;
}

/**
 * Cold starts wait their turn in `queue` (bounded concurrency, most used first); a release
 * `running` says the runtime already runs (adopted after an edge restart) is claimed at once.
 */
export interface StartTurns {
  queue: StartQueue;
  running: (releaseId: string) => boolean;
}

/** `background`: a start nobody is waiting for right now (the edge bringing every live release up at its start). */
export interface StartOptions {
  background?: boolean;
}

/**
 * The Node releases this edge runs. `prepare` starts a release next to the live one and resolves
 * once it is healthy; `activate` swaps the application's upstream in one assignment, then drains
 * the previous process (in-flight requests finish, SIGTERM after the grace period).
 */
export class NodeApps {
  private readonly live = new Map<string, Live>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly activating = new Map<string, Promise<void>>();

  constructor(
    private readonly driver: RuntimeDriver,
    private readonly drainGraceMs: number,
    private readonly describe: (releaseId: string) => Promise<Parameters<RuntimeDriver['start']>[0]>,
    /** Called after a release's process was stopped (the proxy closes its connections to it). */
    private readonly stopped: (release: RunningRelease) => void = () => undefined,
    private readonly plane?: SwitchedPlane,
    private readonly turns?: StartTurns,
  ) {}

  /** Starts the release (once, in its turn) and resolves when it is healthy. */
  prepare(applicationId: string, releaseId: string, options: StartOptions = {}): Promise<RunningRelease> {
    const current = this.live.get(applicationId);
    if (current?.release.releaseId === releaseId) return Promise.resolve(current.release);
    const existing = this.prepared.get(releaseId);
    if (existing) {
      // Waiting its turn in the background, and now someone waits for it: to the front.
      if (!options.background) this.turns?.queue.bump(applicationId);
      return existing.release;
    }
    const start = () => this.describe(releaseId).then((spec) => this.driver.start(spec));
    const turns = this.turns;
    const release = turns ? turns.queue.run(applicationId, start, { urgent: !options.background, immediate: turns.running(releaseId) }) : start();
    const entry: Prepared = { applicationId, release };
    this.prepared.set(releaseId, entry);
    // The clock starts once it is running (not while it waits its turn).
    release.then(
      (running) => {
        if (this.prepared.get(releaseId) !== entry) return;
        entry.timer = setTimeout(() => {
          if (this.prepared.get(releaseId) !== entry) return;
          this.prepared.delete(releaseId);
          void running.stop();
        }, PREPARED_TTL_MS);
        entry.timer.unref();
      },
      () => {
        if (this.prepared.get(releaseId) === entry) this.prepared.delete(releaseId);
      },
    );
    return release;
  }

  /** Makes `releaseId` the application's upstream (starting it first if needed). */
  activate(applicationId: string, releaseId: string, options: StartOptions = {}): Promise<void> {
    const key = `${applicationId}:${releaseId}`;
    let running = this.activating.get(key);
    if (!running) {
      running = this.swap(applicationId, releaseId, options).finally(() => this.activating.delete(key));
      this.activating.set(key, running);
    }
    return running;
  }

  private async swap(applicationId: string, releaseId: string, options: StartOptions): Promise<void> {
    const next = await this.prepare(applicationId, releaseId, options);
    const entry = this.prepared.get(releaseId);
    if (entry) {
      clearTimeout(entry.timer);
      this.prepared.delete(releaseId);
    }
    const previous = this.live.get(applicationId);
    if (previous?.release === next) return;
    this.live.set(applicationId, live(next));
    let reloaded: unknown;
    try {
      reloaded = await this.plane?.switched();
    } catch (error) {
      // The data plane kept its old config: the old release keeps serving, the new one is stopped.
      if (this.live.get(applicationId)?.release === next) {
        if (previous) this.live.set(applicationId, previous);
        else this.live.delete(applicationId);
      }
      await next.stop().catch(() => undefined);
      this.stopped(next);
      throw error;
    }
    if (previous) void this.drain(previous, reloaded);
  }

  /** Stops the application's process (it has no Node release any more). */
  async retire(applicationId: string): Promise<void> {
    const previous = this.live.get(applicationId);
    if (!previous) return;
    this.live.delete(applicationId);
    const reloaded = await this.plane?.switched().catch(() => undefined);
    await this.drain(previous, reloaded);
  }

  /** Stopped once nobody is proxying to it any more: this edge's requests and the data plane's old workers (each at most the grace period). */
  private async drain(old: Live, reloaded?: unknown): Promise<void> {
    if (this.plane && reloaded !== undefined) await this.plane.drained(reloaded, old.release, this.drainGraceMs);
    if (old.inflight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.drainGraceMs);
        old.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await old.release.stop();
    this.stopped(old.release);
  }

  upstream(applicationId: string): Upstream | undefined {
    return this.live.get(applicationId)?.upstream;
  }

  /** Every application's live Node release (metrics ask them for CPU, memory and restarts). */
  *liveReleases(): Iterable<[string, RunningRelease]> {
    for (const [applicationId, l] of this.live) yield [applicationId, l.release];
  }

  /** The application's live release (the first-minute watch asks it for its crashes and errors). */
  running(applicationId: string): RunningRelease | undefined {
    return this.live.get(applicationId)?.release;
  }

  releaseOf(applicationId: string): string | undefined {
    return this.live.get(applicationId)?.release.releaseId;
  }

  /** The releases this edge runs or has prepared (their unpacked trees must stay). */
  releaseIds(): string[] {
    return [...[...this.live.values()].map((l) => l.release.releaseId), ...this.prepared.keys()];
  }

  logs(releaseId: string): string | undefined {
    for (const live of this.live.values()) if (live.release.releaseId === releaseId) return live.release.logTail();
    return undefined;
  }

  async stopAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    for (const p of this.prepared.values()) clearTimeout(p.timer);
    const prepared = [...this.prepared.values()].map((p) => p.release.then((r) => r.stop(), () => undefined));
    this.prepared.clear();
    await Promise.all([...all.map((l) => l.release.stop().then(() => this.stopped(l.release))), ...prepared]);
  }
}
