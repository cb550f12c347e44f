import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, testRedisPrefix } from '@slipway/testing';
import type { AuthConfig } from '../config.js';
import { SignInAttempts, type SignInAttempt } from './sign-in-attempts.service.js';

// Two SignInAttempts, each with its own Redis connection, stand for two processes of the service.
describe('SignInAttempts (real Redis, two processes)', () => {
  const redisPrefix = testRedisPrefix('sign-in-attempts');
  const clients: Redis[] = [];
  const config = {
    AUTH_REDIS_PREFIX: redisPrefix.prefix,
    AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: 5,
    AUTH_SIGN_IN_ACCOUNT_WINDOW_SECONDS: 900,
    AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS: 60,
    AUTH_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS: 200,
    AUTH_SIGN_IN_ADDRESS_MAX_FAILURES: 8,
    AUTH_SIGN_IN_ADDRESS_WINDOW_SECONDS: 900,
  } as AuthConfig;
  const process = () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    return new SignInAttempts(config, redis);
  };
  const [a, b] = [process(), process()];
  /** The account part of the keys, as the service hashes it (an email trimmed and lower-cased). */
  const sha = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  const lockTtl = (app: string, email: string) => clients[0]!.pttl(`${redisPrefix.prefix}sign-in:${app}:account:${sha(email)}:lock`);

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redisPrefix.cleanup();
  });

  /** One wrong password through `limiter`: 'failed', or the refusal's status and X-Retry-After. */
  const wrong = async (limiter: SignInAttempts, app: string, email: string, address: string): Promise<string> => {
    let attempt: SignInAttempt;
    try {
      attempt = await limiter.begin(app, email, address);
    } catch (error) {
      const { status, headers } = error as { status: number; headers: Record<string, string> };
      return `${status} ${headers['X-Retry-After']}`;
    }
    await limiter.failed(attempt);
    return 'failed';
  };

  it('30 parallel wrong passwords from 12 addresses through two processes: exactly 5 are evaluated, the rest 429 with the lock’s wait', async () => {
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => wrong(i % 2 ? a : b, 'app1', 'victim@example.com', `198.51.100.${i % 12}`)));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(5);
    // While the last verdicts are reached, and once the lock is set: the wait is the lock's (60 s), never the 15-minute window's.
    for (const o of outcomes.filter((o) => o !== 'failed')) expect(['429 60', '429 59']).toContain(o);
    const ttl = await lockTtl('app1', 'victim@example.com');
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('counts the email case-blind and trimmed, per application; an unknown account locks exactly like a known one', async () => {
    for (let i = 0; i < 5; i++) expect(await wrong(a, 'app2', i % 2 ? ' Nobody@Example.com' : 'nobody@example.com', `203.0.113.${i}`)).toBe('failed');
    expect(await wrong(b, 'app2', 'NOBODY@example.com', '203.0.113.99')).toBe('429 60');
    expect(await wrong(b, 'app3', 'nobody@example.com', '203.0.113.99')).toBe('failed');
  });

  it('doubles each further lock within a day, up to the longest', async () => {
    const redis = clients[0]!;
    const locks: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) await wrong(a, 'app4', 'doubling@example.com', `192.0.2.${round * 5 + i}`);
      locks.push(Math.round((await lockTtl('app4', 'doubling@example.com')) / 1000));
      await redis.del(`${redisPrefix.prefix}sign-in:app4:account:${sha('doubling@example.com')}:lock`); // the lock ran out
    }
    expect(locks).toEqual([60, 120, 200, 200]);
  });

  it('a success clears the account’s failures; a password reset or change (clearAccount) lifts a lock at once', async () => {
    for (let i = 0; i < 4; i++) await wrong(a, 'app5', 'user@example.com', '192.0.2.200');
    await a.succeeded(await b.begin('app5', 'user@example.com', '192.0.2.200'));
    for (let i = 0; i < 4; i++) expect(await wrong(b, 'app5', 'user@example.com', '192.0.2.201')).toBe('failed');
    expect(await wrong(b, 'app5', 'user@example.com', '192.0.2.201')).toBe('failed');
    expect(await wrong(a, 'app5', 'user@example.com', '192.0.2.202')).toMatch(/^429/);
    await b.clearAccount('app5', 'USER@example.com');
    await a.succeeded(await a.begin('app5', 'user@example.com', '192.0.2.202'));
  });

  it('limits failures per address over any accounts, counting an IPv6 /64 as one address', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 9; i++) outcomes.push(await wrong(i % 2 ? a : b, 'app6', `person${i}@example.com`, `2001:db8:6:1::${i.toString(16)}`));
    expect(outcomes.slice(0, 8)).toEqual(Array(8).fill('failed'));
    expect(outcomes[8]).toMatch(/^429 \d+$/);
    expect(await wrong(a, 'app6', 'another@example.com', '2001:db8:6:1:ffff:ffff:ffff:ffff')).toMatch(/^429/);
    expect(await wrong(a, 'app6', 'another@example.com', '2001:db8:6:2::1')).toBe('failed');
    expect(await wrong(a, 'app7', 'another@example.com', '2001:db8:6:1::1')).toBe('failed');
  });
});
