import { Logger } from '@nestjs/common';
import { LATENCY_BOUNDS_MS, asApplicationId, type AppMetrics, type MetricsDelta } from '@slipway/platform-data';
import type { RunningRelease } from '@slipway/runtime';

/** How often what was counted goes to the metrics store (and the runtime is asked for CPU and memory). */
const FLUSH_MS = 10_000;

interface Counts {
  requests: number;
  byClass: number[];
  latency: number[];
}

const counts = (): Counts => ({ requests: 0, byClass: [0, 0, 0, 0, 0], latency: new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0) });

function bucketOf(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]!) return i;
  return LATENCY_BOUNDS_MS.length;
}

/**
 * The edge's per-application metrics: each answer counted in memory (a map lookup and three
 * increments on the request path), and every FLUSH_MS added to the metrics store (AppMetrics,
 * Redis) with the live releases' CPU time, memory and restarts from the runtime. A store that
 * does not answer loses that interval's counts, never slows a request.
 */
export class EdgeMetrics {
  private readonly logger = new Logger('edge');
  private current = new Map<string, Counts>();
  /** Per release: the CPU seconds and restarts last seen (the store gets differences). */
  private readonly seen = new Map<string, { cpuSeconds: number; restarts: number }>();
  private timer?: NodeJS.Timeout;
  private flushing = false;

  constructor(
    private readonly store: AppMetrics,
    /** The Node releases live now, by application. */
    private readonly live: () => Iterable<[applicationId: string, release: RunningRelease]>,
  ) {}

  record(applicationId: string, status: number, ms: number): void {
    let c = this.current.get(applicationId);
    if (!c) this.current.set(applicationId, (c = counts()));
    c.requests += 1;
    const cls = Math.floor(status / 100) - 1;
    if (cls >= 0 && cls < 5) c.byClass[cls]! += 1;
    c.latency[bucketOf(ms)]! += 1;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Adds what was counted since the last flush to the store. */
  async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    const minute = Math.floor(Date.now() / 60_000);
    const taken = this.current;
    this.current = new Map();
    try {
      const deltas = new Map<string, MetricsDelta>();
      for (const [applicationId, c] of taken) deltas.set(applicationId, { ...c, cpuSeconds: 0, restarts: 0 });
      await this.addUsage(deltas);
      await Promise.all([...deltas].map(([applicationId, delta]) => this.store.add(asApplicationId(applicationId), minute, delta)));
    } catch (error) {
      this.logger.warn(`metrics not stored: ${(error as Error).message}`);
    } finally {
      this.flushing = false;
    }
  }

  /** CPU time and restarts since the last flush, and memory now, of every live release. */
  private async addUsage(deltas: Map<string, MetricsDelta>): Promise<void> {
    const live = [...this.live()];
    const reports = await Promise.all(live.map(([, release]) => Promise.resolve(release.report?.()).catch(() => undefined)));
    const ids = new Set<string>();
    live.forEach(([applicationId, release], i) => {
      const report = reports[i];
      if (!report) return;
      ids.add(release.releaseId);
      const last = this.seen.get(release.releaseId) ?? { cpuSeconds: 0, restarts: 0 };
      const cpuSeconds = report.cpuSeconds ?? last.cpuSeconds;
      this.seen.set(release.releaseId, { cpuSeconds, restarts: report.restarts });
      let delta = deltas.get(applicationId);
      if (!delta) deltas.set(applicationId, (delta = { ...counts(), cpuSeconds: 0, restarts: 0 }));
      delta.cpuSeconds = Math.max(0, cpuSeconds - last.cpuSeconds);
      delta.restarts = Math.max(0, report.restarts - last.restarts);
      if (typeof report.memoryBytes === 'number') delta.memoryBytes = report.memoryBytes;
    });
    for (const id of this.seen.keys()) if (!ids.has(id)) this.seen.delete(id);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
