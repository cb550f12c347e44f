import { TEST_REDIS_URL, testRedisPrefix } from '@slipway/testing';
import { Redis } from 'ioredis';
import { asApplicationId } from '../ids.js';
import { AppMetrics, LATENCY_BOUNDS_MS, quantileMs } from './app-metrics.js';

const APP = asApplicationId('01234567-89ab-cdef-0123-456789abcdef');
const OTHER = asApplicationId('fedcba98-7654-3210-fedc-ba9876543210');
const histogram = (counts: Record<number, number>) => [...LATENCY_BOUNDS_MS, Infinity].map((_, i) => counts[i] ?? 0);

describe('quantileMs', () => {
  it('interpolates within the bucket the quantile falls in; null without requests', () => {
    expect(quantileMs(histogram({}), 0.5)).toBeNull();
    // 100 requests in (5, 10] ms: p50 halfway.
    expect(quantileMs(histogram({ 3: 100 }), 0.5)).toBe(7.5);
    // 99 fast, 1 in (1, 2.5] s: p99 at the top of the fast bucket, the slow one past it.
    expect(quantileMs(histogram({ 0: 99, 10: 1 }), 0.99)).toBe(1);
    expect(quantileMs(histogram({ 0: 99, 10: 1 }), 1)).toBe(2500);
    expect(quantileMs(histogram({ 14: 5 }), 0.5)).toBe(30_000);
  });
});

describe('AppMetrics (real Redis)', () => {
  const { prefix, cleanup } = testRedisPrefix('app-metrics');
  const redis = new Redis(TEST_REDIS_URL);
  const metrics = new AppMetrics(redis, prefix);
  afterAll(async () => {
    await cleanup();
    redis.disconnect();
  });

  it("adds several edges' counts into a minute and reads the hour by the minute and the day by 10 minutes", async () => {
    const now = Date.UTC(2026, 10, 27, 12, 30, 30);
    const minute = Math.floor(now / 60_000);
    const delta = { requests: 10, byClass: [0, 8, 0, 0, 2], latency: histogram({ 2: 10 }), cpuSeconds: 3, restarts: 1, memoryBytes: 5_000 };
    await metrics.add(APP, minute, delta);
    await metrics.add(APP, minute, { ...delta, memoryBytes: 4_000 });
    await metrics.add(APP, minute - 15, { ...delta, requests: 5, byClass: [0, 5, 0, 0, 0], latency: histogram({ 6: 5 }), restarts: 0, memoryBytes: 9_000 });
    await metrics.add(OTHER, minute, delta);

    const hour = await metrics.series(APP, 'hour', now);
    expect(hour.points).toHaveLength(60);
    expect(hour.points.at(-1)).toMatchObject({
      requests: 20,
      requestsPerSecond: 0.333,
      byClass: { '2xx': 16, '5xx': 4 },
      cpu: 0.1,
      memoryBytes: 5_000,
      restarts: 2,
      latencyMs: { p50: 3.5 },
    });
    expect(hour.summary).toMatchObject({ requests: 25, byClass: { '2xx': 21, '5xx': 4 }, memoryBytes: 9_000, restarts: 2 });
    const day = await metrics.series(APP, 'day', now);
    expect(day.points).toHaveLength(144);
    expect(day.stepSeconds).toBe(600);
    expect(day.summary.requests).toBe(25);
    expect((await metrics.series(OTHER, 'hour', now)).summary.requests).toBe(10);
    expect(await redis.ttl(`${prefix}:metrics:${APP}:${minute}`)).toBeGreaterThan(24 * 3600);
  });
});
