/**
 * A token bucket over bytes: `rate` bytes a second, up to `burst` saved up. `take` may go into
 * debt (a chunk already read must be accounted for whole); `waitMs` says how long until the debt
 * is paid. The clock is injectable for tests.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.at = now();
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
  }

  /** Whole bytes available now (0 when in debt). */
  available(): number {
    this.refill();
    return Math.max(0, Math.floor(this.tokens));
  }

  /** Spends `bytes`, into debt if need be. */
  take(bytes: number): void {
    this.refill();
    this.tokens -= bytes;
  }

  /** Milliseconds until the bucket is out of debt (0 when it is not). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000);
  }
}
