import { isDeepStrictEqual } from 'node:util';
import type { ReleaseToRun, RunningRelease, RuntimeDriver } from '@slipway/runtime';
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

/**
 * A release no longer live, stopped once nothing is proxied to it any more — unless the
 * application asks for it back first (a rollback): see `NodeApps.takeBack`.
 */
interface Draining {
  applicationId: string;
  entry: Live;
  /** Set once the drain stops it: from then on it cannot be taken back. */
  stopping?: Promise<void>;
  /** Resolves once the drain is over (the release stopped, or taken back). */
  done: Promise<void>;
}

/**
 * The same process serves a release asked for again only when it would be started as it runs:
 * same environment, command, Node and ports it may reach. Where it listens (`port`) is the
 * runtime's choice (the data plane's free slot, which the draining process itself holds).
 */
function runsAs(running: ReleaseToRun, wanted: ReleaseToRun): boolean {
  return isDeepStrictEqual({ ...running, port: undefined }, { ...wanted, port: undefined });
}

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
 * A release to run, as its caller read it (the edge: the application's route with that release
 * in it): handed to `describe` when its start comes, so nothing is read twice for one start.
 */
export interface NodeRelease {
  applicationId: string;
  release: { id: string };
}

/**
 * The Node releases this edge runs. `prepare` starts a release next to the live one and resolves
 * once it is healthy; `activate` swaps the application's upstream in one assignment, then drains
 * the previous process (in-flight requests finish, SIGTERM after the grace period).
 *
 * One release id runs as one process at a time. A release asked for again while it still drains
 * (a rollback just after a deploy) is not started again: neither driver can run it twice — the
 * runtime supervisor hands back the process it still holds, which the drain would then stop
 * under the live route (502s), and the local driver would start a second one in the same release
 * directory and cgroup, which the drain's stop kills with the first. So the drain is called off
 * and the running process serves again (`takeBack`); when it would not run as asked (its
 * environment changed meanwhile) or is already being stopped, the release starts afresh once the
 * drain is over, while the live release keeps serving.
 */
export class NodeApps<R extends NodeRelease = NodeRelease> {
  private readonly live = new Map<string, Live>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly activating = new Map<string, Promise<void>>();
  /** By release id. */
  private readonly draining = new Map<string, Draining>();
  /** What each release was started with (its environment among it): whether a draining one can serve again as asked. */
  private readonly startedAs = new WeakMap<RunningRelease, ReleaseToRun>();
  /** Each release's entry, one for its whole life: requests still in flight from before a drain that was called off count in the next one. */
  private readonly entries = new WeakMap<RunningRelease, Live>();

  constructor(
    private readonly driver: RuntimeDriver,
    private readonly drainGraceMs: number,
    /** What the release runs with (its environment read now, when its start comes). */
    private readonly describe: (release: R) => Promise<ReleaseToRun>,
    /** Called after a release's process was stopped (the proxy closes its connections to it). */
    private readonly stopped: (release: RunningRelease) => void = () => undefined,
    private readonly plane?: SwitchedPlane,
    private readonly turns?: StartTurns,
  ) {}

  /** Starts the release (once, in its turn) and resolves when it is healthy. */
  prepare(target: R, options: StartOptions = {}): Promise<RunningRelease> {
    const { applicationId } = target;
    const releaseId = target.release.id;
    const current = this.live.get(applicationId);
    if (current?.release.releaseId === releaseId) return Promise.resolve(current.release);
    const existing = this.prepared.get(releaseId);
    if (existing) {
      // Waiting its turn in the background, and now someone waits for it: to the front.
      if (!options.background) this.turns?.queue.bump(applicationId);
      return existing.release;
    }
    const draining = this.draining.get(releaseId);
    const release = draining?.applicationId === applicationId ? this.takeBack(draining, target, options) : this.start(target, options);
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

  private start(target: R, options: StartOptions): Promise<RunningRelease> {
    const start = async () => {
      const spec = await this.describe(target);
      const running = await this.driver.start(spec);
      this.startedAs.set(running, spec);
      return running;
    };
    const turns = this.turns;
    return turns ? turns.queue.run(target.applicationId, start, { urgent: !options.background, immediate: turns.running(target.release.id) }) : start();
  }

  /**
   * The release asked for again while it drains: its drain is called off and its process serves
   * again, when it runs as it would be started now and is not being stopped yet (decided in one
   * step, so the drain cannot stop it after that). Else it starts afresh once the drain is over.
   */
  private async takeBack(draining: Draining, target: R, options: StartOptions): Promise<RunningRelease> {
    const {
      entry: { release },
    } = draining;
    const wanted = await this.describe(target);
    const startedAs = this.startedAs.get(release);
    if (this.draining.get(release.releaseId) === draining && !draining.stopping && startedAs && runsAs(startedAs, wanted)) {
      this.draining.delete(release.releaseId);
      return release;
    }
    await draining.done;
    return this.start(target, options);
  }

  /** Makes the release the application's upstream (starting it first if needed). */
  activate(target: R, options: StartOptions = {}): Promise<void> {
    const key = `${target.applicationId}:${target.release.id}`;
    let running = this.activating.get(key);
    if (!running) {
      running = this.swap(target, options).finally(() => this.activating.delete(key));
      this.activating.set(key, running);
    }
    return running;
  }

  private async swap(target: R, options: StartOptions): Promise<void> {
    const { applicationId } = target;
    const releaseId = target.release.id;
    const next = await this.prepare(target, options);
    const entry = this.prepared.get(releaseId);
    if (entry) {
      clearTimeout(entry.timer);
      this.prepared.delete(releaseId);
    }
    const previous = this.live.get(applicationId);
    if (previous?.release === next) return;
    this.live.set(applicationId, this.entryOf(next));
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
    if (previous) void this.drain(applicationId, previous, reloaded);
  }

  private entryOf(release: RunningRelease): Live {
    let entry = this.entries.get(release);
    if (!entry) {
      entry = live(release);
      this.entries.set(release, entry);
    }
    return entry;
  }

  /** Stops the application's process (it has no Node release any more). */
  async retire(applicationId: string): Promise<void> {
    const previous = this.live.get(applicationId);
    if (!previous) return;
    this.live.delete(applicationId);
    const reloaded = await this.plane?.switched().catch(() => undefined);
    await this.drain(applicationId, previous, reloaded);
  }

  /**
   * Stopped once nobody is proxying to it any more: this edge's requests and the data plane's old
   * workers (each at most the grace period) — unless it was taken back meanwhile (`takeBack`) or
   * stopped with everything else (`stopAll`).
   */
  private async drain(applicationId: string, old: Live, reloaded?: unknown): Promise<void> {
    const releaseId = old.release.releaseId;
    let over!: () => void;
    const draining: Draining = { applicationId, entry: old, done: new Promise<void>((resolve) => (over = resolve)) };
    this.draining.set(releaseId, draining);
    try {
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
      if (this.draining.get(releaseId) !== draining) return;
      draining.stopping = old.release.stop();
      await draining.stopping;
      this.stopped(old.release);
    } finally {
      if (this.draining.get(releaseId) === draining) this.draining.delete(releaseId);
      over();
    }
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

  /** What a release this edge started runs with (the first-minute watch redacts its output with that environment). */
  startedWith(release: RunningRelease): ReleaseToRun | undefined {
    return this.startedAs.get(release);
  }

  releaseOf(applicationId: string): string | undefined {
    return this.live.get(applicationId)?.release.releaseId;
  }

  /** The releases this edge runs (live or draining) or has prepared (their unpacked trees must stay). */
  releaseIds(): string[] {
    return [...[...this.live.values()].map((l) => l.release.releaseId), ...this.draining.keys(), ...this.prepared.keys()];
  }

  logs(releaseId: string): string | undefined {
    for (const live of this.live.values()) if (live.release.releaseId === releaseId) return live.release.logTail();
    return undefined;
  }

  /** Stops every release now: live, prepared, and draining (their drains then stop nothing). */
  async stopAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    const draining = [...this.draining.values()];
    this.draining.clear();
    for (const p of this.prepared.values()) clearTimeout(p.timer);
    const prepared = [...this.prepared.values()].map((p) =>
      p.release.then(
        (r) => r.stop(),
        () => undefined,
      ),
    );
    this.prepared.clear();
    const stopping = draining.map((d) => d.stopping ?? d.entry.release.stop().then(() => this.stopped(d.entry.release)));
    await Promise.all([...all.map((l) => l.release.stop().then(() => this.stopped(l.release))), ...prepared, ...stopping]);
  }
}
