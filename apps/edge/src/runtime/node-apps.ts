import type { RunningRelease, RuntimeDriver } from '@slipway/runtime';
import type { Upstream } from '../proxy/proxy.js';

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
 * The Node releases this edge runs. `prepare` starts a release next to the live one and resolves
 * once it is healthy; `activate` swaps the application's upstream in one assignment, then drains
 * the previous process (in-flight requests finish, SIGTERM after the grace period).
 */
export class NodeApps {
  private readonly live = new Map<string, Live>();
  private readonly prepared = new Map<string, { applicationId: string; release: Promise<RunningRelease>; timer: NodeJS.Timeout }>();
  private readonly activating = new Map<string, Promise<void>>();

  constructor(
    private readonly driver: RuntimeDriver,
    private readonly drainGraceMs: number,
    private readonly describe: (releaseId: string) => Promise<Parameters<RuntimeDriver['start']>[0]>,
    /** Called after a release's process was stopped (the proxy closes its connections to it). */
    private readonly stopped: (release: RunningRelease) => void = () => undefined,
    private readonly plane?: SwitchedPlane,
  ) {}

  /** Starts the release (once) and resolves when it is healthy. */
  prepare(applicationId: string, releaseId: string): Promise<RunningRelease> {
    const current = this.live.get(applicationId);
    if (current?.release.releaseId === releaseId) return Promise.resolve(current.release);
    const existing = this.prepared.get(releaseId);
    if (existing) return existing.release;
    const release = this.describe(releaseId).then((spec) => this.driver.start(spec));
    const timer = setTimeout(() => {
      if (this.prepared.get(releaseId)?.release === release) {
        this.prepared.delete(releaseId);
        void release.then((r) => r.stop(), () => undefined);
      }
    }, PREPARED_TTL_MS);
    timer.unref();
    this.prepared.set(releaseId, { applicationId, release, timer });
    release.catch(() => {
      clearTimeout(timer);
      this.prepared.delete(releaseId);
    });
    return release;
  }

  /** Makes `releaseId` the application's upstream (starting it first if needed). */
  activate(applicationId: string, releaseId: string): Promise<void> {
    const key = `${applicationId}:${releaseId}`;
    let running = this.activating.get(key);
    if (!running) {
      running = this.swap(applicationId, releaseId).finally(() => this.activating.delete(key));
      this.activating.set(key, running);
    }
    return running;
  }

  private async swap(applicationId: string, releaseId: string): Promise<void> {
    const next = await this.prepare(applicationId, releaseId);
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
