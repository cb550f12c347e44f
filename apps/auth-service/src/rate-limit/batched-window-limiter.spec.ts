import { Redis } from 'ioredis';
import { TEST_REDIS_URL, testRedisPrefix, waitFor } from '@slipway/testing';
import { BatchedWindowLimiter, LOCAL_SHARE } from './batched-window-limiter.js';

// Two limiters on one real Redis stand for two replicas of the service.
describe('BatchedWindowLimiter (real Redis, two replicas)', () => {
  const redisPrefix = testRedisPrefix('batched-limiter');
  const clients: Redis[] = [];
  const limiters: BatchedWindowLimiter[] = [];
  const replica = () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    const limiter = new BatchedWindowLimiter(redis, 20);
    limiters.push(limiter);
    return limiter;
  };
  // A day-long window, so a test never straddles a window boundary.
  const WINDOW_MS = 86_400_000;

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
    const a = replica();
    const key = `${redisPrefix.prefix}one`;
    expect(await admitted(a, key, 20, 25)).toBe(20);
    const wait = await a.consume(key, 20, WINDOW_MS);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(WINDOW_MS);
    await a.close();
    // Only the 20 admissions reached Redis.
    const stored = await clients[0]!.get(`${key}:${Math.floor(Date.now() / WINDOW_MS)}`);
    expect(Number(stored)).toBe(20);
  });

  it('shares the limit across replicas: what one admitted is refused on the other once synchronised', async () => {
    const [a, b] = [replica(), replica()];
    const key = `${redisPrefix.prefix}shared`;
    expect(await admitted(a, key, 100, 60)).toBe(60);
    // A's batch reaches Redis within its flush interval; B's first look at the key reads it.
    const window = Math.floor(Date.now() / WINDOW_MS);
    await waitFor(async () => Number(await clients[0]!.get(`${key}:${window}`)) === 60, { timeoutMs: 5000 });
    expect(await admitted(b, key, 100, 100)).toBe(40);
    // A still believes 60 were used: it runs ahead by at most its local share before it synchronises and refuses.
    expect(await admitted(a, key, 100, 30)).toBeLessThanOrEqual(LOCAL_SHARE * 100);
    expect(await a.consume(key, 100, WINDOW_MS)).toBeGreaterThan(0);
  });

  it('lets replicas hammering at once overshoot by at most LOCAL_SHARE of the limit each', async () => {
    const replicas = [replica(), replica(), replica()];
    const key = `${redisPrefix.prefix}burst`;
    const max = 200;
    const counts = await Promise.all(replicas.map((r) => admitted(r, key, max, max)));
    const total = counts.reduce((x, y) => x + y, 0);
    expect(total).toBeGreaterThanOrEqual(max);
    expect(total).toBeLessThanOrEqual(max + (replicas.length - 1) * LOCAL_SHARE * max);
  });
});
