import type { ApplicationId } from '../ids.js';
import type { Redis } from 'ioredis';

/** Upper bounds (ms) of the latency histogram's buckets; one more bucket holds everything slower. */
export const LATENCY_BOUNDS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000] as const;
/** Minutes are kept this long (a day, and an hour to spare). */
const KEEP_SECONDS = 25 * 3600;

/** What an edge counted for one application in one minute (added to what other edges counted). */
export interface MetricsDelta {
  requests: number;
  /** Answers by class: index 0 = 1xx … 4 = 5xx. */
  byClass: number[];
  /** Requests per latency bucket (LATENCY_BOUNDS_MS, then the overflow). */
  latency: number[];
  /** CPU time the application's processes used (seconds). */
  cpuSeconds: number;
  restarts: number;
  /** Memory its processes held at the sample (bytes), when the runtime knows it. */
  memoryBytes?: number;
}

export interface MetricsPoint {
  /** Start of the interval (ISO). */
  time: string;
  requests: number;
  requestsPerSecond: number;
  byClass: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  /** CPU cores used on average over the interval. */
  cpu: number;
  /** The highest memory sample in the interval (bytes); null: none. */
  memoryBytes: number | null;
  restarts: number;
}

export interface MetricsSeries {
  range: 'hour' | 'day';
  stepSeconds: number;
  summary: Omit<MetricsPoint, 'time'>;
  points: MetricsPoint[];
}

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The latency at quantile `q` from a histogram (linear within the bucket it falls in); null: no requests. */
export function quantileMs(histogram: number[], q: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    const n = histogram[i]!;
    if (n > 0 && seen + n >= rank) {
      const low = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const high = LATENCY_BOUNDS_MS[i] ?? low;
      return Math.round((low + (high - low) * ((rank - seen) / n)) * 100) / 100;
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

interface Totals {
  requests: number;
  byClass: number[];
  latency: number[];
  cpuSeconds: number;
  restarts: number;
  memoryBytes: number | null;
}

const empty = (): Totals => ({
  requests: 0,
  byClass: [0, 0, 0, 0, 0],
  latency: LATENCY_BOUNDS_MS.map(() => 0).concat(0),
  cpuSeconds: 0,
  restarts: 0,
  memoryBytes: null,
});

function add(into: Totals, from: Totals): void {
  into.requests += from.requests;
  from.byClass.forEach((n, i) => (into.byClass[i]! += n));
  from.latency.forEach((n, i) => (into.latency[i]! += n));
  into.cpuSeconds += from.cpuSeconds;
  into.restarts += from.restarts;
  if (from.memoryBytes !== null) into.memoryBytes = Math.max(into.memoryBytes ?? 0, from.memoryBytes);
}

function point(t: Totals, seconds: number): Omit<MetricsPoint, 'time'> {
  return {
    requests: t.requests,
    requestsPerSecond: Math.round((t.requests / seconds) * 1000) / 1000,
    byClass: Object.fromEntries(CLASSES.map((c, i) => [c, t.byClass[i]!])) as MetricsPoint['byClass'],
    latencyMs: { p50: quantileMs(t.latency, 0.5), p95: quantileMs(t.latency, 0.95), p99: quantileMs(t.latency, 0.99) },
    cpu: Math.round((t.cpuSeconds / seconds) * 10_000) / 10_000,
    memoryBytes: t.memoryBytes,
    restarts: t.restarts,
  };
}

/**
 * Per-application metrics by the minute, in Redis (`<prefix>:metrics:<applicationId>:<minute>`,
 * a hash of counters kept 25 h): the edges add what they counted (requests, classes, latency
 * histogram, the app's CPU time and restarts; memory as the highest sample), the owners' API reads
 * the last hour (by the minute) or day (by 10 minutes). Several edges add into the same minutes.
 */
export class AppMetrics {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(applicationId: ApplicationId, minute: number): string {
    return `${this.prefix}:metrics:${applicationId}:${minute}`;
  }

  /** Adds an edge's counts to the application's minute (`minute`: epoch minutes). */
  async add(applicationId: ApplicationId, minute: number, delta: MetricsDelta): Promise<void> {
    const key = this.key(applicationId, minute);
    const multi = this.redis.multi();
    const incr = (field: string, n: number) => {
      if (n) multi.hincrbyfloat(key, field, n);
    };
    incr('n', delta.requests);
    delta.byClass.forEach((n, i) => incr(`c${i + 1}`, n));
    delta.latency.forEach((n, i) => incr(`h${i}`, n));
    incr('cpu', delta.cpuSeconds);
    incr('restarts', delta.restarts);
    if (delta.memoryBytes !== undefined)
      multi.eval(
        "local m = tonumber(redis.call('HGET', KEYS[1], 'mem') or '-1'); if tonumber(ARGV[1]) > m then redis.call('HSET', KEYS[1], 'mem', ARGV[1]) end; return 0",
        1,
        key,
        String(delta.memoryBytes),
      );
    multi.expire(key, KEEP_SECONDS);
    await multi.exec();
  }

  /** The last hour by the minute, or the last day by 10 minutes, and a summary over it. */
  async series(applicationId: ApplicationId, range: 'hour' | 'day', nowMs = Date.now()): Promise<MetricsSeries> {
    const minutes = range === 'hour' ? 60 : 1440;
    const step = range === 'hour' ? 1 : 10;
    const last = Math.floor(nowMs / 60_000);
    const first = last - minutes + 1;
    const pipeline = this.redis.pipeline();
    for (let m = first; m <= last; m++) pipeline.hgetall(this.key(applicationId, m));
    const rows = ((await pipeline.exec()) ?? []).map(([, value]) => (value ?? {}) as Record<string, string>);
    const whole = empty();
    const points: MetricsPoint[] = [];
    for (let i = 0; i < rows.length; i += step) {
      const bucket = empty();
      for (const row of rows.slice(i, i + step)) add(bucket, totalsOf(row));
      add(whole, bucket);
      points.push({ time: new Date((first + i) * 60_000).toISOString(), ...point(bucket, step * 60) });
    }
    return { range, stepSeconds: step * 60, summary: point(whole, minutes * 60), points };
  }
}

function totalsOf(row: Record<string, string>): Totals {
  const n = (field: string) => Number(row[field] ?? 0);
  return {
    requests: n('n'),
    byClass: CLASSES.map((_, i) => n(`c${i + 1}`)),
    latency: [...LATENCY_BOUNDS_MS, 0].map((_, i) => n(`h${i}`)),
    cpuSeconds: n('cpu'),
    restarts: n('restarts'),
    memoryBytes: row['mem'] === undefined ? null : Number(row['mem']),
  };
}
