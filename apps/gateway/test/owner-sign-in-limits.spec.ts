import fc from 'fast-check';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from '@slipway/testing';
import { signIn, signUp, startOwnerGateway, type OwnerGateway } from './support/owner-gateway.js';
import type { HttpResult } from './support/http.js';

const RIGHT = 'correct horse battery';
const WRONG = 'wrong password!!';

function expectLimited(res: HttpResult, scope: 'account' | 'address', maxSeconds: number) {
  expect([res.status, res.json?.code]).toEqual([429, 'too_many_sign_in_attempts']);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(res.json.retryAfterSeconds).toBe(retryAfter);
  expect(res.json.error).toContain(scope === 'account' ? 'for this account' : 'from this address');
  expect(res.headers['set-cookie']).toBeUndefined();
}

describe('owners’ dashboard sign-in limits (real HTTP, Postgres, Redis) — default limits', () => {
  let gw: OwnerGateway;
  beforeAll(async () => {
    gw = await startOwnerGateway('owner-limits');
  });
  afterAll(() => gw.close());

  it('25 wrong passwords in a row: the first 10 are 401, every later one 429 with Retry-After; the right password is refused during the lock', async () => {
    expect((await signUp(gw.url, 'victim@example.com', RIGHT)).status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await signIn(gw.url, 'victim@example.com', `${WRONG}${i}`);
      statuses.push(res.status);
      if (res.status === 429) expectLimited(res, 'account', 15 * 60);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), ...Array<number>(15).fill(429)]);
    expectLimited(await signIn(gw.url, 'victim@example.com', RIGHT), 'account', 15 * 60);
    // The lock is on the account, not the address: the right password from elsewhere is refused too.
    expectLimited(await signIn(gw.url, 'victim@example.com', RIGHT, { from: '127.0.0.200' }), 'account', 15 * 60);
  });

  it('counts every spelling of one email (letter case, surrounding whitespace) as that one account', async () => {
    expect((await signUp(gw.url, 'casey@example.com', RIGHT)).status).toBe(201);
    const spelling = fc.tuple(
      fc.array(fc.boolean(), { minLength: 17, maxLength: 17 }),
      fc.constantFrom('', ' ', '\t', '  \n'),
      fc.constantFrom('', ' ', '\t\t', '\r\n'),
    );
    const variants = fc
      .sample(spelling, { numRuns: 14, seed: 20 })
      .map(([upper, before, after]) => `${before}${[...'casey@example.com'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}${after}`);
    for (const variant of variants.slice(0, 10)) expect([variant, (await signIn(gw.url, variant, WRONG)).status]).toEqual([variant, 401]);
    for (const variant of variants.slice(10)) expectLimited(await signIn(gw.url, variant, RIGHT), 'account', 15 * 60);
    expectLimited(await signIn(gw.url, 'casey@example.com', RIGHT), 'account', 15 * 60);
  });

  it('counts one account across client addresses (10 addresses, one failure each, lock it for all)', async () => {
    expect((await signUp(gw.url, 'spread@example.com', RIGHT)).status).toBe(201);
    for (let i = 2; i < 12; i++) expect((await signIn(gw.url, 'spread@example.com', WRONG, { from: `127.0.1.${i}` })).status).toBe(401);
    expectLimited(await signIn(gw.url, 'spread@example.com', RIGHT, { from: '127.0.1.12' }), 'account', 15 * 60);
    expectLimited(await signIn(gw.url, 'spread@example.com', RIGHT), 'account', 15 * 60);
  });

  it('counts unknown emails like known ones (no way to tell them apart by the lock)', async () => {
    for (let i = 0; i < 10; i++) expect((await signIn(gw.url, 'nobody@example.com', WRONG, { from: '127.0.2.1' })).status).toBe(401);
    expectLimited(await signIn(gw.url, 'NOBODY@example.com', WRONG, { from: '127.0.2.2' }), 'account', 15 * 60);
  });

  it('counts one address across many accounts (50 failures, then 429 for any account from it, the right password included); other addresses are unaffected', async () => {
    expect((await signUp(gw.url, 'bystander@example.com', RIGHT)).status).toBe(201);
    for (let i = 0; i < 50; i++) {
      // A successful sign-in from the same address does not wipe its failures.
      if (i === 25) expect((await signIn(gw.url, 'bystander@example.com', RIGHT, { from: '127.0.3.1' })).status).toBe(200);
      expect((await signIn(gw.url, `stuffing-${i}@example.com`, WRONG, { from: '127.0.3.1' })).status).toBe(401);
    }
    expectLimited(await signIn(gw.url, 'someone-new@example.com', WRONG, { from: '127.0.3.1' }), 'address', 15 * 60);
    expectLimited(await signIn(gw.url, 'bystander@example.com', RIGHT, { from: '127.0.3.1' }), 'address', 15 * 60);
    expect((await signIn(gw.url, 'bystander@example.com', RIGHT, { from: '127.0.3.2' })).status).toBe(200);
  });

  it('ignores X-Forwarded-For from an untrusted peer: rotating spoofed values never resets the per-address count', async () => {
    const spoof = fc.sample(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constant('unknown'), fc.constant('127.0.4.1, 10.0.0.1')), { numRuns: 51, seed: 7 });
    for (let i = 0; i < 50; i++) {
      const res = await signIn(gw.url, `xff-${i}@example.com`, WRONG, {
        from: '127.0.4.1',
        headers: { 'x-forwarded-for': spoof[i]!, forwarded: `for=${spoof[i]}`, 'x-real-ip': spoof[i]! },
      });
      expect(res.status).toBe(401);
    }
    expectLimited(await signIn(gw.url, 'xff-last@example.com', WRONG, { from: '127.0.4.1', headers: { 'x-forwarded-for': spoof[50]! } }), 'address', 15 * 60);
  });

  it('reserves each attempt before hashing: 30 wrong passwords at once for one account give exactly 10 × 401 and 20 × 429', async () => {
    expect((await signUp(gw.url, 'burst@example.com', RIGHT)).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(gw.url, 'burst@example.com', `${WRONG}${i}`, { from: `127.0.5.${i + 1}` })));
    const count = (status: number) => results.filter((r) => r.status === status).length;
    expect([count(401), count(429)]).toEqual([10, 20]);
  });

  it('keeps no email in Redis (account keys are SHA-256 of the normalised email)', async () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const keys = await redis.keys(`${gw.limiterPrefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.join(' ')).not.toMatch(/@|victim|casey/);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

describe('owners’ dashboard sign-in limits — short windows, growing lock, trusted proxy', () => {
  let gw: OwnerGateway;
  beforeAll(async () => {
    gw = await startOwnerGateway('owner-limits-short', {
      OWNER_SIGN_IN_ACCOUNT_MAX_FAILURES: '3',
      OWNER_SIGN_IN_ACCOUNT_WINDOW_SECONDS: '60',
      OWNER_SIGN_IN_ACCOUNT_LOCK_SECONDS: '2',
      OWNER_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS: '4',
      OWNER_SIGN_IN_ADDRESS_MAX_FAILURES: '4',
      GATEWAY_TRUSTED_PROXIES: '127.0.9.1',
    });
  });
  afterAll(() => gw.close());

  /** Polls (bounded) until the account takes the right password again; returns how long that took. */
  async function waitUntilUnlocked(email: string, from: string): Promise<number> {
    const started = Date.now();
    for (let i = 0; i < 60; i++) {
      const res = await signIn(gw.url, email, RIGHT, { from });
      if (res.status === 200) return Date.now() - started;
      expect(res.status).toBe(429);
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${email} still locked after 60 polls`);
  }

  it('locks after the window’s failures, takes the right password once the lock has passed, and doubles the lock when it is earned again', async () => {
    expect((await signUp(gw.url, 'patient@example.com', RIGHT)).status).toBe(201);
    const fail = (n: number, from: string) => signIn(gw.url, 'patient@example.com', `${WRONG}${n}`, { from });
    for (let i = 0; i < 3; i++) expect((await fail(i, `127.0.8.${i + 1}`)).status).toBe(401);
    const first = await signIn(gw.url, 'patient@example.com', RIGHT, { from: '127.0.8.10' });
    expectLimited(first, 'account', 2);
    // Lock 2 s: the right password works again once it has passed.
    expect(await waitUntilUnlocked('patient@example.com', '127.0.8.11')).toBeLessThan(15_000);
    // A success forgets earlier locks, so the next one is 2 s again; a lock earned again while the last is remembered doubles.
    for (let i = 0; i < 3; i++) expect((await fail(i, `127.0.8.${i + 20}`)).status).toBe(401);
    expect(Number((await fail(9, '127.0.8.30')).headers['retry-after'])).toBeLessThanOrEqual(2);
    const start = Date.now();
    for (let i = 0; i < 60 && (await fail(10, '127.0.8.31')).status === 429; i++) await new Promise((r) => setTimeout(r, 200));
    expect(Date.now() - start).toBeLessThan(20_000);
    // That failure was the first of the next round (lock expired); two more lock it again, now for 4 s.
    for (let i = 0; i < 2; i++) expect((await fail(11 + i, `127.0.8.${i + 40}`)).status).toBe(401);
    const doubled = await signIn(gw.url, 'patient@example.com', RIGHT, { from: '127.0.8.50' });
    expectLimited(doubled, 'account', 4);
    expect(Number(doubled.headers['retry-after'])).toBeGreaterThan(2);
  });

  it('believes X-Forwarded-For only from a configured proxy, and only its right-most untrusted entry', async () => {
    const proxy = (xff: string) => ({ from: '127.0.9.1', headers: { 'x-forwarded-for': xff } });
    for (let i = 0; i < 4; i++) expect((await signIn(gw.url, `p-${i}@example.com`, WRONG, proxy(`198.51.100.${i}, 203.0.113.7`))).status).toBe(401);
    // The client 203.0.113.7 is used up whatever it writes to the left; another client behind the proxy is not.
    expectLimited(await signIn(gw.url, 'p-x@example.com', WRONG, proxy('192.0.2.99, 203.0.113.7')), 'address', 900);
    expect((await signIn(gw.url, 'p-y@example.com', WRONG, proxy('203.0.113.8'))).status).toBe(401);
    // IPv6 clients count per /64.
    for (let i = 0; i < 4; i++) expect((await signIn(gw.url, `v6-${i}@example.com`, WRONG, proxy(`2001:db8:1:2::${i + 1}`))).status).toBe(401);
    expectLimited(await signIn(gw.url, 'v6-x@example.com', WRONG, proxy('2001:db8:1:2:ffff::9')), 'address', 900);
    // An untrusted peer's header is ignored: the peer itself is counted.
    for (let i = 0; i < 4; i++)
      expect((await signIn(gw.url, `u-${i}@example.com`, WRONG, { from: '127.0.9.2', headers: { 'x-forwarded-for': `203.0.113.${100 + i}` } })).status).toBe(
        401,
      );
    expectLimited(await signIn(gw.url, 'u-x@example.com', WRONG, { from: '127.0.9.2', headers: { 'x-forwarded-for': '203.0.113.200' } }), 'address', 900);
  });
});

describe('owners’ dashboard sign-in limits are shared by gateway replicas', () => {
  it('failures on two gateways with the same QUEUE_PREFIX add up: 5 + 5 lock the account on both', async () => {
    const first = await startOwnerGateway('owner-limits-replica-a');
    const second = await startOwnerGateway('owner-limits-replica-b', { QUEUE_PREFIX: first.queuePrefix });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await signIn(first.url, 'shared@example.com', WRONG, { from: `127.0.10.${i + 1}` })).status).toBe(401);
        expect((await signIn(second.url, 'Shared@example.com', WRONG, { from: `127.0.11.${i + 1}` })).status).toBe(401);
      }
      expectLimited(await signIn(first.url, 'shared@example.com', WRONG, { from: '127.0.10.99' }), 'account', 900);
      expectLimited(await signIn(second.url, 'shared@example.com', WRONG, { from: '127.0.11.99' }), 'account', 900);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('owners’ dashboard sign-in while Redis does not answer', () => {
  let gw: OwnerGateway;
  beforeAll(async () => {
    gw = await startOwnerGateway('owner-limits-redisdown', { REDIS_URL: 'redis://127.0.0.1:1' });
  });
  afterAll(() => gw.close());

  it('fails closed: 503 unavailable with Retry-After, the right password included, no session', async () => {
    expect((await signUp(gw.url, 'closed@example.com', RIGHT)).status).toBe(201);
    for (const password of [RIGHT, WRONG]) {
      const res = await signIn(gw.url, 'closed@example.com', password);
      expect([res.status, res.json.code, res.headers['retry-after']]).toEqual([503, 'unavailable', '5']);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });
});
