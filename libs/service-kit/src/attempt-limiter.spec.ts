import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AttemptLimiter, accountKeys, hashedAccount, type AttemptKeys, type AttemptLimiterOptions } from './attempt-limiter.js';

const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

// Two limiters, each with its own Redis connection, stand for two processes; every test has its own key prefix.
describe('AttemptLimiter (real Redis, two processes)', () => {
  const clients: Redis[] = [];
  const prefixes: string[] = [];
  const limits = {
    accountMaxFailures: 3,
    accountWindowSeconds: 900,
    accountLockSeconds: 60,
    accountMaxLockSeconds: 200,
    addressMaxFailures: 5,
    addressWindowSeconds: 600,
  };
  const connect = () => {
    const redis = new Redis(REDIS, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    return redis;
  };
  const [redisA, redisB] = [connect(), connect()];
  const pair = (waitBeforeLock: AttemptLimiterOptions['waitBeforeLock'] = 'coming-lock') =>
    [new AttemptLimiter(redisA, { limits, waitBeforeLock }), new AttemptLimiter(redisB, { limits, waitBeforeLock })] as const;

  /** A fresh prefix and the keys of `account` from `address` under it. */
  const scope = () => {
    const prefix = `slipway-test:attempt-limiter:${randomBytes(5).toString('hex')}:`;
    prefixes.push(prefix);
    return (account: string, address = '192.0.2.1'): AttemptKeys => ({
      ...accountKeys(`${prefix}account:${hashedAccount(account)}`),
      address: `${prefix}address:${address}`,
    });
  };

  /** One wrong secret: 'failed', or who was refused and the wait in whole seconds. */
  const wrong = async (limiter: AttemptLimiter, keys: AttemptKeys): Promise<string> => {
    const verdict = await limiter.reserve(keys);
    if (verdict.refused) return `${verdict.refused} ${Math.ceil(verdict.waitMs / 1000)}`;
    await limiter.failed(keys);
    return 'failed';
  };

  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await redisA.keys(`${prefix}*`);
      if (keys.length) await redisA.del(...keys);
    }
    for (const c of clients) c.disconnect();
  });

  it('20 parallel wrong secrets through two processes: exactly the account’s 3 are checked, the rest refused with the coming lock’s wait', async () => {
    const [a, b] = pair('coming-lock');
    const keys = scope();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => wrong(i % 2 ? a : b, keys('victim', `198.51.100.${i}`))));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(3);
    for (const o of outcomes.filter((o) => o !== 'failed')) expect(['account 60', 'account 59']).toContain(o);
    const lock = await redisA.pttl(keys('victim').lock);
    expect(lock).toBeGreaterThan(55_000);
    expect(lock).toBeLessThanOrEqual(60_000);
  });

  it('failure-window: out of failures and not locked yet, the wait is what is left of the failure window', async () => {
    const [a] = pair('failure-window');
    const keys = scope()('window');
    for (let i = 0; i < 3; i++) expect((await a.reserve(keys)).refused).toBe(false);
    const verdict = await a.reserve(keys);
    expect(verdict.refused).toBe('account');
    expect(verdict.refused && verdict.waitMs).toBeGreaterThan(890_000);
    expect(verdict.refused && verdict.waitMs).toBeLessThanOrEqual(900_000);
  });

  it('doubles each further lock while the last is remembered, up to the longest; the lock history and the address count expire', async () => {
    const [a, b] = pair();
    const keysFrom = scope();
    const keys = keysFrom('doubling');
    const locks: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3; i++) expect(await wrong(round % 2 ? a : b, keysFrom('doubling', `192.0.2.${round}`))).toBe('failed');
      locks.push(Math.round((await redisA.pttl(keys.lock)) / 1000));
      await redisA.del(keys.lock); // the lock ran out
    }
    expect(locks).toEqual([60, 120, 200, 200]);
    const strikesTtl = await redisA.pttl(keys.strikes);
    expect(strikesTtl).toBeGreaterThan(23 * 3600 * 1000);
    expect(await redisA.pttl(keys.address)).toBeGreaterThan(0);
  });

  it('a success clears the account’s failures and lock history but gives the address back only its own attempt', async () => {
    const [a, b] = pair();
    const keys = scope();
    for (let i = 0; i < 3; i++) expect(await wrong(a, keys('user'))).toBe('failed');
    await redisA.del(keys('user').lock); // the lock ran out; its strike is remembered
    expect((await b.reserve(keys('user'))).refused).toBe(false);
    await b.succeeded(keys('user'));
    expect(await redisA.exists(keys('user').failures, keys('user').strikes)).toBe(0);
    // 4 reserved from the address, the successful one given back: two more failures fit, then it is refused.
    expect(await redisA.get(keys('user').address)).toBe('3');
    expect(await wrong(a, keys('someone'))).toBe('failed');
    expect(await wrong(b, keys('someone-else'))).toBe('failed');
    expect(await wrong(a, keys('another'))).toMatch(/^address \d+$/);
    // The history is gone: the next lock is the first one's length again.
    for (let i = 0; i < 3; i++) expect(await wrong(a, keys('user', '192.0.2.2'))).toBe('failed');
    expect(Math.round((await redisA.pttl(keys('user').lock)) / 1000)).toBe(60);
  });

  it('a cancelled attempt is given back to the account and the address', async () => {
    const [a] = pair();
    const keys = scope()('busy');
    for (let i = 0; i < 3; i++) {
      expect((await a.reserve(keys)).refused).toBe(false);
      await a.cancelled(keys);
    }
    expect([await redisA.get(keys.failures), await redisA.get(keys.address)]).toEqual(['0', '0']);
    await a.cancelled(keys); // never below zero
    expect([await redisA.get(keys.failures), await redisA.get(keys.address)]).toEqual(['0', '0']);
  });

  it('clearAccount lifts a lock and its history at once', async () => {
    const [a, b] = pair();
    const keys = scope()('locked');
    for (let i = 0; i < 3; i++) await wrong(a, keys);
    expect(await wrong(b, keys)).toMatch(/^account/);
    await b.clearAccount(keys);
    expect(await redisA.exists(keys.failures, keys.lock, keys.strikes)).toBe(0);
    expect((await a.reserve(keys)).refused).toBe(false);
  });

  it('limits failures per address over any accounts; other addresses are unaffected', async () => {
    const [a, b] = pair();
    const keys = scope();
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await wrong(i % 2 ? a : b, keys(`person${i}`, '203.0.113.7')));
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill('failed'));
    expect(outcomes[5]).toMatch(/^address (599|600)$/);
    expect(await wrong(a, keys('person0', '203.0.113.8'))).toBe('failed');
  });
});
