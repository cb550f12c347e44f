/**
 * Cold starts of Node releases, a bounded number at a time (RUNTIME_START_CONCURRENCY). Starting
 * an app is the expensive part of a whole-platform restart (unpack, sandbox, Node's own boot, its
 * first request): forty at once on two cores put the load average at 37 for a minute and every
 * app answered late. Here they wait their turn in order:
 *  1. wanted now — a request reached the app while it was waiting, or a deploy is switching to it
 *     (someone is waiting), first come first served;
 *  2. then the most used applications first (`compare`, read when a slot frees so the latest
 *     counts decide), ties in arrival order.
 * A release the runtime already runs (re-adopted after an edge restart) never enters: `run` with
 * `immediate` starts it at once, outside the count, so adoption never waits behind cold starts.
 */
export interface StartQueueOptions {
  /** Starts running at once, at most. */
  concurrency: number;
  /** Negative when application `a` should start before `b` (usage-meter.ts: more used first). */
  compare: (a: string, b: string) => number;
}

interface Waiting {
  applicationId: string;
  seq: number;
  /** Set when a request or a deploy wants it now: its place among the wanted. */
  wantedAt?: number;
  begin: () => void;
  cancel: (error: Error) => void;
}

export class StartQueue {
  private readonly waiting: Waiting[] = [];
  private running = 0;
  private seq = 0;
  private wantedSeq = 0;
  private scheduled = false;
  /** The most starts ever seen running at once (diagnostics and the spec). */
  peak = 0;

  constructor(private readonly options: StartQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new Error(`start concurrency must be a whole number of at least 1 (got ${options.concurrency})`);
  }

  get concurrency(): number {
    return this.options.concurrency;
  }

  /** Starts waiting their turn (not yet running). */
  get queued(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /**
   * Runs `start` in its turn and resolves with its result. `urgent`: wanted now (a deploy).
   * `immediate`: not a cold start (the runtime already runs it): at once, not counted.
   */
  run<T>(applicationId: string, start: () => Promise<T>, options: { urgent?: boolean; immediate?: boolean } = {}): Promise<T> {
    if (options.immediate) return start();
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        applicationId,
        seq: this.seq++,
        ...(options.urgent ? { wantedAt: this.wantedSeq++ } : {}),
        begin: () => {
          this.running += 1;
          this.peak = Math.max(this.peak, this.running);
          let settled: Promise<T>;
          try {
            settled = start();
          } catch (error) {
            settled = Promise.reject(error);
          }
          settled.then(resolve, reject).finally(() => {
            this.running -= 1;
            this.schedule();
          });
        },
        cancel: reject,
      };
      this.waiting.push(entry);
      this.schedule();
    });
  }

  /**
   * A request reached an application that is waiting its turn: it goes to the front (behind
   * other applications wanted earlier). True when it was waiting.
   */
  bump(applicationId: string): boolean {
    let found = false;
    for (const entry of this.waiting) {
      if (entry.applicationId !== applicationId) continue;
      found = true;
      entry.wantedAt ??= this.wantedSeq++;
    }
    return found;
  }

  /** The edge is stopping: starts still waiting their turn are not made (each rejects with `reason`). */
  cancelWaiting(reason: string): void {
    const cancelled = this.waiting.splice(0);
    for (const entry of cancelled) entry.cancel(new Error(reason));
  }

  /**
   * Picks next on a later tick: every start asked for in the same tick (the edge asks for all its
   * releases in one loop) is ordered before the first one begins.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.running < this.options.concurrency && this.waiting.length) {
      const next = this.pickNext();
      this.waiting.splice(this.waiting.indexOf(next), 1);
      next.begin();
    }
  }

  private pickNext(): Waiting {
    let best = this.waiting[0]!;
    for (const entry of this.waiting) if (before(entry, best, this.options.compare)) best = entry;
    return best;
  }
}

/** Wanted ones first (earliest wanted first), then by `compare`, then arrival. */
function before(a: Waiting, b: Waiting, compare: StartQueueOptions['compare']): boolean {
  if (a.wantedAt !== undefined || b.wantedAt !== undefined) {
    if (a.wantedAt === undefined) return false;
    if (b.wantedAt === undefined) return true;
    return a.wantedAt < b.wantedAt;
  }
  const order = a.applicationId === b.applicationId ? 0 : compare(a.applicationId, b.applicationId);
  if (order !== 0) return order < 0;
  return a.seq < b.seq;
}
