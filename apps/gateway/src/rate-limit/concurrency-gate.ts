/**
 * A counting semaphore with a bounded wait: at most `max` tasks run at once; a caller waits at
 * most `waitMs` for a slot and is then told no (`undefined`) instead of queueing without end.
 */
export class ConcurrencyGate {
  private running = 0;
  private readonly waiting: Array<(granted: boolean) => void> = [];

  constructor(
    readonly max: number,
    private readonly waitMs: number,
  ) {}

  /** Runs `task` in a slot; `{ ran: false }` when no slot came free in time. */
  async run<T>(task: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    if (!(await this.acquire())) return { ran: false };
    try {
      return { ran: true, value: await task() };
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<boolean> {
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const grant = (granted: boolean) => {
        clearTimeout(timer);
        resolve(granted);
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, this.waitMs);
      this.waiting.push(grant);
    });
  }

  /** Hands the slot straight to the longest waiter, or frees it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.running--;
  }
}
