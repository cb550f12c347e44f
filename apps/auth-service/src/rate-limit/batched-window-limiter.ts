import type { Redis } from 'ioredis';

interface Entry {
  /** Index of the fixed window `current` counts (start = window × windowMs). */
  window: number;
  windowMs: number;
  /** Shared totals as Redis last reported them (every replica's flushed admissions). */
  current: number;
  previous: number;
  /** Admitted here and not yet added to Redis. */
  pending: number;
  lastUsed: number;
  syncing: Promise<void> | undefined;
  /** The first synchronisation of this window; no decision before it. */
  first: Promise<void> | undefined;
}

/** Each replica may run ahead of the shared count by at most this share of the limit (then it waits for Redis). */
export const LOCAL_SHARE = 0.1;

/**
 * A sliding-window counter (this fixed window plus the previous one, weighted by how much of it
 * still overlaps the sliding window) kept in Redis, so it is shared by every replica — but
 * synchronised in batches instead of one round trip per request: admissions are counted
 * locally and added to Redis with one pipelined INCRBY + PEXPIRE + GET per key every
 * `flushMs`, which also brings back the other replicas' counts.
 *
 * Tolerance: a replica's view of the others is at most `flushMs` (+ one round trip) old, and it
 * never admits more than LOCAL_SHARE of the limit beyond the shared count before it waits for a
 * synchronisation; so with R replicas at most (R − 1) × LOCAL_SHARE × max extra requests get
 * through in a window. Refused requests are not counted. A key seen for the first time (or in
 * a new window) is synchronised before its first decision.
 */
export class BatchedWindowLimiter {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly flushMs = 100,
  ) {}

  /** 0 when admitted (and counted), else the milliseconds until a request would be admitted. */
  async consume(key: string, max: number, windowMs: number): Promise<number> {
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    let entry = this.entries.get(key);
    if (!entry || entry.window !== window || entry.windowMs !== windowMs) {
      const stale = entry;
      entry = { window, windowMs, current: 0, previous: 0, pending: 0, lastUsed: now, syncing: undefined, first: undefined };
      this.entries.set(key, entry);
      const fresh = entry;
      entry.first = (async () => {
        if (stale?.pending) await this.sync(key, stale);
        await this.sync(key, fresh);
      })().finally(() => (fresh.first = undefined));
    }
    if (entry.first) await entry.first;
    const share = Math.max(1, Math.floor(max * LOCAL_SHARE));
    while (entry.pending >= share) await this.sync(key, entry);
    entry.lastUsed = now;
    const elapsed = Date.now() - window * windowMs;
    const overlap = Math.max(0, 1 - elapsed / windowMs);
    const mine = entry.current + entry.pending;
    if (entry.previous * overlap + mine + 1 > max) {
      if (mine + 1 > max) return windowMs - elapsed;
      // The previous window's weight has to shrink until one more fits.
      const neededOverlap = (max - 1 - mine) / Math.max(1, entry.previous);
      return Math.max(1, Math.ceil((overlap - neededOverlap) * windowMs));
    }
    entry.pending++;
    this.timer ??= setTimeout(() => this.flushAll(), this.flushMs).unref();
    return 0;
  }

  /** Sends what is pending (nothing is lost on shutdown) and stops the timer. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.entries].map(([key, entry]) => (entry.pending ? this.sync(key, entry).catch(() => undefined) : undefined)));
  }

  private flushAll(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUsed > 2 * entry.windowMs && !entry.pending) this.entries.delete(key);
      else if (now - entry.lastUsed <= entry.windowMs || entry.pending) void this.sync(key, entry).catch(() => undefined);
    }
    if ([...this.entries.values()].some((e) => e.pending)) this.timer = setTimeout(() => this.flushAll(), this.flushMs).unref();
  }

  /** One pipelined round trip: add our pending admissions, read the shared totals back. */
  private sync(key: string, entry: Entry): Promise<void> {
    entry.syncing ??= (async () => {
      try {
        const sent = entry.pending;
        const current = `${key}:${entry.window}`;
        const results = await this.redis
          .pipeline()
          .incrby(current, sent)
          .pexpire(current, 2 * entry.windowMs)
          .get(`${key}:${entry.window - 1}`)
          .exec();
        const failed = results?.find(([error]) => error);
        if (!results || failed) throw failed?.[0] ?? new Error('rate limit synchronisation returned nothing');
        entry.pending -= sent;
        entry.current = Number(results[0]![1]);
        entry.previous = Number(results[2]![1] ?? 0);
      } finally {
        entry.syncing = undefined;
      }
    })();
    return entry.syncing;
  }
}
