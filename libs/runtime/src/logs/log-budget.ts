import { TokenBucket } from './token-bucket.js';

/** What one application may log (every release of it together, stdout and stderr together). */
export interface LogBudgetOptions {
  /** Bytes a second kept in the log; lines beyond are dropped (with a marker saying how many). */
  rateBytes: number;
  /** Bytes that may be kept (and read) at once above the rate, after a quiet spell. */
  burstBytes: number;
  /**
   * Bytes a second read from the app's pipes at most: beyond it the runtime stops reading, the
   * pipe fills and the app's own writes wait (in its own cgroup, on its own CPU budget). Between
   * `rateBytes` and this, lines are read and dropped cheaply; at least `rateBytes`.
   */
  readRateBytes: number;
}

/** Something reading an app's pipes that the budget can stop and start again. */
export interface Throttled {
  hold(reason: 'rate'): void;
  release(reason: 'rate'): void;
}

/**
 * One application's log budget: two token buckets, one for what is read from its pipes (the
 * runtime's own work) and one for what is kept on disk (the owner's log). Shared by the app's
 * releases, so a swap or a crash restart does not reset it.
 */
export class LogBudget {
  private readonly read: TokenBucket;
  private readonly keep: TokenBucket;
  private readonly members = new Set<Throttled>();
  private timer?: NodeJS.Timeout;

  constructor(
    readonly options: LogBudgetOptions,
    now?: () => number,
  ) {
    if (options.readRateBytes < options.rateBytes)
      throw new Error(`the log read rate (${options.readRateBytes} B/s) must be at least the kept rate (${options.rateBytes} B/s)`);
    this.read = new TokenBucket(options.readRateBytes, options.burstBytes, now);
    this.keep = new TokenBucket(options.rateBytes, options.burstBytes, now);
  }

  join(member: Throttled): void {
    this.members.add(member);
    if (this.timer) member.hold('rate');
  }

  leave(member: Throttled): void {
    this.members.delete(member);
  }

  get size(): number {
    return this.members.size;
  }

  /** `bytes` were read from one of the app's pipes; past the read rate, every pipe of the app waits. */
  onRead(bytes: number): void {
    this.read.take(bytes);
    this.throttle();
  }

  private throttle(): void {
    if (this.timer) return;
    const wait = this.read.waitMs();
    if (wait === 0) return;
    for (const member of this.members) member.hold('rate');
    this.wakeAfter(wait);
  }

  /**
   * Releases the members once one look at the clock finds the debt paid. One look decides: a
   * second one (through `throttle`) could find it paid after the first found it not, and return
   * without releasing anyone, leaving the app's pipes unread and its writes waiting for good.
   */
  private wakeAfter(wait: number): void {
    this.timer = setTimeout(() => {
      const left = this.read.waitMs();
      if (left > 0) return this.wakeAfter(left);
      this.timer = undefined;
      for (const member of this.members) member.release('rate');
    }, wait);
  }

  /** Bytes that may be kept now. */
  keepable(): number {
    return this.keep.available();
  }

  spend(bytes: number): void {
    this.keep.take(bytes);
  }

  /** Stops the timer (the app's last release is gone). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
