/**
 * A sweep a service runs every `everyMs` (and once `firstAfterMs` after `start`, so a platform
 * that was down catches up at once): one run at a time — a tick while a run is still going is
 * skipped, not queued — a failed run reported to `onError` and tried again at the next tick,
 * and `stop` waiting for the run in progress. The timers never keep the process alive.
 */
export class PeriodicTask {
  private timers: NodeJS.Timeout[] = [];
  private running?: Promise<void>;

  constructor(
    private readonly run: () => Promise<unknown>,
    private readonly onError: (error: Error) => void,
  ) {}

  start(everyMs: number, firstAfterMs = 0): void {
    const interval = setInterval(() => void this.tick(), everyMs);
    const first = setTimeout(() => void this.tick(), firstAfterMs);
    interval.unref();
    first.unref();
    this.timers.push(interval, first);
  }

  /** One run now (or the one in progress). */
  tick(): Promise<void> {
    this.running ??= this.run()
      .then(
        () => undefined,
        (error: unknown) => this.onError(error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    await this.running;
  }
}
