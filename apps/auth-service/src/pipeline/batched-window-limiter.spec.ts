import { Redis } from 'ioredis';
import { TEST_REDIS_URL, testRedisPrefix, waitFor } from '@slipway/testing';
import { BatchedWindowLimiter, LOCAL_SHARE, type BatchedWindowLimiterOptions } from './batched-window-limiter.js';

// Two (or three) limiters on one real Redis stand for replicas of the service.
describe('BatchedWindowLimiter (real Redis, replicas)', () => {
  const redisPrefix = testRedisPrefix('batched-limiter');
  const clients: Redis[] = [];
  const limiters: BatchedWindowLimiter[] = [];
  const replica = (options: BatchedWindowLimiterOptions = {}) => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    const limiter = new BatchedWindowLimiter(redis, { flushMs: 20, ...options });
    limiters.push(limiter);
    return { limiter, redis };
  };
  // A day-long window, so a test never straddles a window boundary.
  const WINDOW_MS = 86_400_000;
  const windowNow = () => Math.floor(Date.now() / WINDOW_MS);

  afterAll(async () => {
    for (const l of limiters) await l.close();
    for (const c of clients) c.disconnect();
    await redisPrefix.cleanup();
  });

  const admitted = async (limiter: BatchedWindowLimiter, key: string, max: number, attempts: number) => {
    let ok = 0;
    for (let i = 0; i < attempts; i++) if ((await limiter.consume(key, max, WINDOW_MS)) === 0) ok++;
    return ok;
  };

  it('counts exactly on one replica, refuses with a wait, and does not count refusals', async () => {
    const { limiter: a, redis } = replica();
    const key = `${redisPrefix.prefix}one`;
    expect(await admitted(a, key, 20, 25)).toBe(20);
    const wait = await a.consume(key, 20, WINDOW_MS);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(WINDOW_MS);
    await a.close();
    // Only the 20 admissions reached Redis.
    expect(Number(await redis.get(`${key}:${windowNow()}`))).toBe(20);
  });

  it('is exact on one replica for a busy key with a larger limit (300 of 400 attempts)', async () => {
    const { limiter } = replica();
    expect(await admitted(limiter, `${redisPrefix.prefix}busy`, 300, 400)).toBe(300);
  });

  it('shares the limit across replicas: what one admitted is refused on the other once synchronised', async () => {
    const [{ limiter: a, redis }, { limiter: b }] = [replica(), replica()];
    const key = `${redisPrefix.prefix}shared`;
    const max = 100;
    const share = LOCAL_SHARE * max;
    expect(await admitted(a, key, max, 60)).toBe(60);
    // A's batches reach Redis within its flush interval.
    await waitFor(async () => Number(await redis.get(`${key}:${windowNow()}`)) === 60, { timeoutMs: 5000 });
    // B has never seen the key: it decides locally, and learns the shared count at most `share` admissions later.
    const onB = await admitted(b, key, max, 100);
    expect(onB).toBeGreaterThanOrEqual(40);
    expect(onB).toBeLessThanOrEqual(40 + share);
    // A still believes 60 were used: it runs ahead by at most its local share before it synchronises and refuses.
    expect(await admitted(a, key, max, 30)).toBeLessThanOrEqual(share);
    expect(await a.consume(key, max, WINDOW_MS)).toBeGreaterThan(0);
    expect(await b.consume(key, max, WINDOW_MS)).toBeGreaterThan(0);
  });

  it('lets R replicas hammering one key at once admit at most max + R × share (the documented guarantee)', async () => {
    for (const max of [50, 200, 300]) {
      const replicas = [replica(), replica(), replica()].map((r) => r.limiter);
      const key = `${redisPrefix.prefix}burst-${max}`;
      // Interleaved: every replica sends its requests concurrently, 4 at a time each.
      const hammer = async (limiter: BatchedWindowLimiter) => {
        let ok = 0;
        for (let i = 0; i < max; i += 4) {
          const got = await Promise.all([0, 1, 2, 3].map(() => limiter.consume(key, max, WINDOW_MS)));
          ok += got.filter((w) => w === 0).length;
        }
        return ok;
      };
      const counts = await Promise.all(replicas.map(hammer));
      const total = counts.reduce((x, y) => x + y, 0);
      expect(total).toBeGreaterThanOrEqual(max);
      expect(total).toBeLessThanOrEqual(max + replicas.length * Math.floor(LOCAL_SHARE * max));
    }
  });

  it('makes no Redis round trip for visitors seen once, and holds at most maxKeys of them', async () => {
    const { limiter, redis } = replica({ maxKeys: 1000 });
    // Counts the limiter's round trips (the real client still runs every call).
    let roundTrips = 0;
    const pipeline = redis.pipeline.bind(redis);
    redis.pipeline = ((...args: Parameters<Redis['pipeline']>) => (roundTrips++, pipeline(...args))) as Redis['pipeline'];
    for (let i = 0; i < 20_000; i++) expect(await limiter.consume(`${redisPrefix.prefix}visitor-${i}`, 300, WINDOW_MS)).toBe(0);
    expect(limiter.size).toBeLessThanOrEqual(1000);
    expect(limiter.size).toBeGreaterThanOrEqual(500);
    await new Promise((resolve) => setTimeout(resolve, 100)); // a few flush ticks
    expect(roundTrips).toBe(0);
  });

  it('drops keys idle for two windows', async () => {
    const { limiter } = replica();
    for (let i = 0; i < 50; i++) await limiter.consume(`${redisPrefix.prefix}idle-${i}`, 10, 50);
    expect(limiter.size).toBe(50);
    await waitFor(() => limiter.size === 0, { timeoutMs: 5000 });
  });

  it('reads a busy key back from Redis after dropping it from memory: eviction does not reset its count', async () => {
    const { limiter } = replica({ maxKeys: 3 });
    const key = `${redisPrefix.prefix}evicted`;
    expect(await admitted(limiter, key, 20, 20)).toBe(20);
    for (let i = 0; i < 5; i++) await limiter.consume(`${redisPrefix.prefix}other-${i}`, 20, WINDOW_MS);
    expect(limiter.size).toBeLessThanOrEqual(3);
    // The key is held no more; its next decision reads the 20 back and refuses.
    expect(await admitted(limiter, key, 20, 5)).toBe(0);
  });
});
