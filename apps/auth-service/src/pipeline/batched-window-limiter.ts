import type { Redis } from 'ioredis';

interface Entry {
  /** Index of the fixed window counted (start = window × windowMs). */
  window: number;
  windowMs: number;
  /** This window's shared total as Redis last reported it (every replica's sent admissions); 0 before any synchronisation. */
  shared: number;
  /** The previous window's total, as far as this replica knows it (weighted into the sliding window). */
  previous: number;
  /** Admitted here in this window (sent or not). */
  local: number;
  /** Admitted here and not yet added to Redis. */
  pending: number;
  /** Of `pending`, how many are on their way to Redis right now. */
  inflight: number;
  /** The last window in which this key reached `syncFrom` admissions here (then it is synchronised). */
  busyWindow: number;
  lastUsed: number;
  syncing: Promise<void> | undefined;
  /** A key dropped while busy is read back from Redis before its first decision here. */
  first: Promise<void> | undefined;
}

export interface BatchedWindowLimiterOptions {
  /** How often keys with unsent admissions and a non-trivial count are synchronised (ms). */
  flushMs?: number;
  /** Most keys held in memory; beyond it the least recently used is dropped. Bounds the memory. */
  maxKeys?: number;
  /** Slots (4 bytes each, fixed) of the filter that remembers keys dropped while they had a count. */
  droppedSlots?: number;
}

/** Each replica may run ahead of the shared count by at most this share of the limit (then it waits for Redis). */
export const LOCAL_SHARE = 0.1;

/**
 * A per-key sliding-window counter (this fixed window plus the previous one, weighted by how much
 * of it still overlaps) whose decisions are LOCAL and whose counts are shared through Redis only
 * for keys that matter — so its cost does not grow with the number of distinct keys:
 *
 * - A key seen for the first time is decided at once (no round trip): it starts from zero.
 * - Its admissions are counted locally; only once a key has been admitted `syncFrom` times in a
 *   window (half its local share) are they added to Redis — one pipelined INCRBY + PEXPIRE + GET
 *   per key, in the background, every `flushMs`, which also brings back the other replicas'
 *   counts. A visitor who makes a few reads never costs a Redis command.
 * - A replica never holds more than `share` = max(1, ⌊LOCAL_SHARE × max⌋) unsent admissions of a
 *   key: at that point its next decision waits for a synchronisation.
 * - At most `maxKeys` keys are held, in two generations: a used key moves to the young one; when
 *   the young one holds maxKeys/2 keys, or two windows after the last rotation, the keys of the
 *   old one (unused since) are dropped and the young one becomes old. A key
 *   dropped while it had a non-trivial count has its unsent admissions sent and is remembered in
 *   a fixed-size filter for two windows: its next decision on this replica waits for Redis, so
 *   eviction never resets a busy key. (A filter collision only costs one round trip.)
 *
 * Guarantee (fixed-window count per key, across R replicas sharing one Redis): at most
 * `max + R × share` admissions per window — every admission beyond what a replica has read from
 * Redis belongs to its single unsent batch of at most `share`. With one replica the count is exact
 * (`max`). Keys with fewer than `syncFrom` admissions in a window on a replica stay local to it
 * (they are below the limit anyway); such a light key dropped from memory is forgotten, which
 * takes `maxKeys` other keys used after it — a client able to use that many addresses already
 * has that many allowances. Refused requests are not counted.
 */
export class BatchedWindowLimiter {
  /** Keys used since the last rotation, and those used only before it (dropped at the next one). */
  private young = new Map<string, Entry>();
  private old = new Map<string, Entry>();
  private rotatedAt = Date.now();
  private longestWindowMs = 0;
  /** Keys with a non-trivial count and unsent admissions: synchronised on the next tick. */
  private readonly dirty = new Set<string>();
  private readonly dropped: Int32Array;
  private readonly flushMs: number;
  private readonly maxKeys: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    options: BatchedWindowLimiterOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 100;
    this.maxKeys = Math.max(1, options.maxKeys ?? 100_000);
    this.dropped = new Int32Array(Math.max(1, options.droppedSlots ?? 65_536)).fill(-2);
  }

  /** Keys held in memory now (bounded by `maxKeys`). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** 0 when admitted (and counted), else the milliseconds until a request would be admitted. */
  async consume(key: string, max: number, windowMs: number): Promise<number> {
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    let entry = this.young.get(key);
    if (!entry) {
      entry = this.old.get(key);
      if (entry) {
        this.old.delete(key);
        this.young.set(key, entry);
      }
    }
    if (entry && entry.windowMs !== windowMs) {
      this.young.delete(key);
      this.drop(key, entry);
      entry = undefined;
    }
    if (!entry) {
      if (this.young.size >= Math.max(1, Math.floor(this.maxKeys / 2))) this.rotate(now);
      this.longestWindowMs = Math.max(this.longestWindowMs, windowMs);
      entry = {
        window,
        windowMs,
        shared: 0,
        previous: 0,
        local: 0,
        pending: 0,
        inflight: 0,
        busyWindow: -2,
        lastUsed: now,
        syncing: undefined,
        first: undefined,
      };
      this.young.set(key, entry);
      // Dropped from memory while busy in this window or the last: read it back first.
      if (this.dropped[this.slot(key)]! >= window - 1) {
        const fresh = entry;
        fresh.busyWindow = window;
        fresh.first = this.sync(key, fresh).finally(() => (fresh.first = undefined));
      }
    }
    if (entry.first) await entry.first;
    entry.lastUsed = now;
    this.timer ??= setTimeout(() => this.tick(), this.flushMs).unref();
    const share = Math.max(1, Math.floor(max * LOCAL_SHARE));
    for (;;) {
      const at = Date.now();
      const current = Math.floor(at / windowMs);
      if (entry.window !== current) this.roll(key, entry, current);
      if (entry.pending < share) break;
      await this.sync(key, entry);
    }
    const elapsed = Date.now() - entry.window * windowMs;
    const overlap = Math.max(0, 1 - elapsed / windowMs);
    const mine = entry.shared + entry.pending;
    if (entry.previous * overlap + mine + 1 > max) {
      if (mine + 1 > max) return windowMs - elapsed;
      // The previous window's weight has to shrink until one more fits.
      const neededOverlap = (max - 1 - mine) / Math.max(1, entry.previous);
      return Math.max(1, Math.ceil((overlap - neededOverlap) * windowMs));
    }
    entry.pending++;
    entry.local++;
    if (entry.local >= syncFrom(share)) {
      entry.busyWindow = entry.window;
      this.dirty.add(key);
    }
    return 0;
  }

  /** Sends what is pending for keys with a non-trivial count (nothing of them is lost on shutdown) and stops the timer. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const keys = [...this.dirty];
    this.dirty.clear();
    await Promise.all(
      keys
        .map((key) => this.young.get(key) ?? this.old.get(key))
        .map((entry, i) => (entry?.pending ? this.sync(keys[i]!, entry).catch(() => undefined) : undefined)),
    );
  }

  /** Every `flushMs` while keys are held: synchronise the dirty keys, drop the idle ones. */
  private tick(): void {
    this.timer = undefined;
    for (const key of this.dirty) {
      const entry = this.young.get(key) ?? this.old.get(key);
      if (entry && entry.pending > entry.inflight) void this.sync(key, entry).catch(() => undefined);
      else this.dirty.delete(key);
    }
    // Keys unused for two (of the longest) windows are dropped: the old generation is at least that idle.
    const now = Date.now();
    if (now - this.rotatedAt > 2 * this.longestWindowMs) this.rotate(now);
    if (this.size) this.timer = setTimeout(() => this.tick(), this.flushMs).unref();
  }

  /**
   * Drops the keys not used since the last rotation; the young ones become old. Each key is visited
   * once per rotation and a rotation happens once per maxKeys/2 new keys (or once per two windows),
   * so the work per decision is constant and at most maxKeys keys are ever held.
   */
  private rotate(now: number): void {
    for (const [key, entry] of this.old) this.drop(key, entry);
    this.old = this.young;
    this.young = new Map();
    this.rotatedAt = now;
  }

  /** Forgets a key; one with a non-trivial count sends its unsent admissions and is remembered in the filter. */
  private drop(key: string, entry: Entry): void {
    this.dirty.delete(key);
    if (entry.busyWindow >= entry.window - 1) {
      const slot = this.slot(key);
      this.dropped[slot] = Math.max(this.dropped[slot]!, entry.busyWindow);
      const unsent = entry.pending - entry.inflight;
      if (unsent > 0) void this.send(key, entry.window, entry.windowMs, unsent).catch(() => undefined);
    }
  }

  /** A new window: the last one's total becomes `previous`, its unsent admissions of a non-trivial key go to Redis. */
  private roll(key: string, entry: Entry, window: number): void {
    const unsent = entry.pending - entry.inflight;
    if (unsent > 0 && entry.busyWindow === entry.window) void this.send(key, entry.window, entry.windowMs, unsent).catch(() => undefined);
    entry.previous = window === entry.window + 1 ? Math.max(entry.shared + entry.pending, entry.local) : 0;
    entry.window = window;
    entry.shared = 0;
    entry.local = 0;
    entry.pending = entry.inflight; // the in-flight batch is subtracted when it lands (it counts the old window)
    this.dirty.delete(key);
  }

  private send(key: string, window: number, windowMs: number, count: number): Promise<unknown> {
    const current = `${key}:${window}`;
    return this.redis
      .pipeline()
      .incrby(current, count)
      .pexpire(current, 2 * windowMs)
      .exec();
  }

  /** One pipelined round trip: add our unsent admissions, read the shared totals back. */
  private sync(key: string, entry: Entry): Promise<void> {
    entry.syncing ??= (async () => {
      const window = entry.window;
      const sent = entry.pending - entry.inflight;
      entry.inflight += sent;
      try {
        const current = `${key}:${window}`;
        const results = await this.redis
          .pipeline()
          .incrby(current, sent)
          .pexpire(current, 2 * entry.windowMs)
          .get(`${key}:${window - 1}`)
          .exec();
        const failed = results?.find(([error]) => error);
        if (!results || failed) throw failed?.[0] ?? new Error('rate limit synchronisation returned nothing');
        entry.pending -= sent;
        if (entry.window === window) {
          entry.shared = Number(results[0]![1]);
          entry.previous = Math.max(entry.previous, Number(results[2]![1] ?? 0));
        }
      } finally {
        entry.inflight -= sent;
        entry.syncing = undefined;
      }
    })();
    return entry.syncing;
  }

  /** FNV-1a of the key, as a slot of the dropped-keys filter. */
  private slot(key: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    return (hash >>> 0) % this.dropped.length;
  }
}

/** A key is synchronised with Redis once admitted this many times in a window on one replica. */
export function syncFrom(share: number): number {
  return Math.max(2, Math.ceil(share / 2));
}
