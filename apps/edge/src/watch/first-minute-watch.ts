import { Logger } from '@nestjs/common';
import { Redactor } from '@slipway/contract';
import type { RunningRelease, RuntimeReport } from '@slipway/runtime';
import { runtimeHazards, type ServerErrorCount } from './runtime-hazards.js';

/** Distinct `METHOD /path → status` kept per watched release. */
const MAX_SAMPLES = 5;
const SAMPLE_PATH_CHARS = 200;

export interface FirstMinuteWatchDeps {
  windowMs: number;
  /** Puts the hazards on the deployment that made the release (its status unchanged). */
  addHazards(applicationId: string, releaseId: string, hazards: { code: string }[]): Promise<unknown>;
}

interface Watched {
  releaseId: string;
  release: RunningRelease | undefined;
  /** What the release runs with (the application's secrets among it): what the hazards are redacted with. */
  environment: Record<string, string>;
  errors: ServerErrorCount;
  timer: NodeJS.Timeout;
}

/**
 * The first minute after a release goes live is watched: 5xx answers are counted here, per
 * application, by whichever data plane answered (the Node proxy, or nginx through its status
 * feed); crashes, restarts and stderr error lines by the runtime (`RunningRelease.report`). When
 * the window is over they become hazards of the release's deployment (`runtime-hazards.ts`).
 * Nothing is counted for an application outside its window: `watching` is one map lookup on
 * the request path.
 */
export class FirstMinuteWatch {
  private readonly logger = new Logger('edge');
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly deps: FirstMinuteWatchDeps) {}

  /**
   * The release just went live for the application: its window starts now (a previous one of the
   * application's ends early). `environment`: what it was started with, as the edge read it then.
   */
  begin(applicationId: string, releaseId: string, release: RunningRelease | undefined, environment: Record<string, string>): void {
    const previous = this.watched.get(applicationId);
    if (previous?.releaseId === releaseId) return;
    if (previous) void this.finish(applicationId, previous);
    const timer = setTimeout(() => void this.finish(applicationId, this.watched.get(applicationId)), this.deps.windowMs);
    timer.unref();
    this.watched.set(applicationId, { releaseId, release, environment, errors: { count: 0, samples: new Map() }, timer });
  }

  watching(applicationId: string): boolean {
    return this.watched.has(applicationId);
  }

  /** An answer the application gave (or nginx gave for it); only 5xx are counted. `path` without its query. */
  answered(applicationId: string, status: number, method: string, path: string): void {
    if (status < 500) return;
    const watched = this.watched.get(applicationId);
    if (!watched) return;
    watched.errors.count += 1;
    const key = `${method} ${path.slice(0, SAMPLE_PATH_CHARS)} → ${status}`;
    const seen = watched.errors.samples.get(key);
    if (seen !== undefined) watched.errors.samples.set(key, seen + 1);
    else if (watched.errors.samples.size < MAX_SAMPLES) watched.errors.samples.set(key, 1);
  }

  private async finish(applicationId: string, watched: Watched | undefined): Promise<void> {
    if (!watched) return;
    clearTimeout(watched.timer);
    if (this.watched.get(applicationId) === watched) this.watched.delete(applicationId);
    try {
      const report: RuntimeReport | undefined = await watched.release?.report?.();
      const redactor = new Redactor(Object.entries(watched.environment).map(([name, value]) => ({ name, value })));
      const hazards = runtimeHazards(report, watched.errors, redactor, Math.round(this.deps.windowMs / 1000));
      if (hazards.length) await this.deps.addHazards(applicationId, watched.releaseId, hazards);
    } catch (error) {
      this.logger.warn(`release ${watched.releaseId}: its first minute could not be reported: ${(error as Error).message}`);
    }
  }

  /** Stops the timers (the edge is closing): unreported windows are dropped. */
  close(): void {
    for (const w of this.watched.values()) clearTimeout(w.timer);
    this.watched.clear();
  }
}
