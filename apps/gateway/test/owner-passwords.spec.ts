import { TEST_REDIS_URL } from '@slipway/testing';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { OwnerPasswords } from '../src/owners/accounts/owner-passwords.js';
import { signIn, signUp, startOwnerGateway, type OwnerGateway } from './support/owner-gateway.js';

const RIGHT = 'correct horse battery';
const BASE72 = 'The quick brown fox jumps over the lazy dog; 72 bytes of passphrase!!...';

describe('owner passwords over 72 bytes are refused, never cut short (real HTTP)', () => {
  let gw: OwnerGateway;
  beforeAll(async () => {
    gw = await startOwnerGateway('owner-pw-length');
  });
  afterAll(() => gw.close());

  const owners = async (email: string) => Number((await gw.sql.query('SELECT count(*) FROM owners WHERE email = $1', [email])).rows[0].count);

  it('sign-up: a 95-character password is 400 password_too_long with a clear message, and no account is made', async () => {
    const res = await signUp(gw.url, 'long@example.com', 'x'.repeat(95));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: expect.stringMatching(/at most 72 bytes.*refused rather than cut short/),
      code: 'password_too_long',
      documentation: 'http://localhost:3000/api/v1#error-password_too_long',
    });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(await owners('long@example.com')).toBe(0);
  });

  it('sign-up counts UTF-8 bytes, not characters: exactly 72 bytes is accepted, 73 is refused, whatever the letters', async () => {
    const cases: Array<[string, number]> = [
      ['a'.repeat(72), 201],
      ['a'.repeat(73), 400],
      [`${'a'.repeat(71)}é`, 400], // 73 bytes, 72 characters
      ['é'.repeat(36), 201], // 72 bytes
      ['😀'.repeat(18), 201], // 72 bytes, 36 UTF-16 units
      ['😀'.repeat(19), 400],
      ['€'.repeat(25), 400], // 75 bytes, 25 characters
    ];
    for (const [i, [password, status]] of cases.entries()) {
      const res = await signUp(gw.url, `bytes-${i}@example.com`, password);
      expect([i, res.status, res.json.code]).toEqual([i, status, status === 400 ? 'password_too_long' : undefined]);
    }
  });

  it('sign-in: a password sharing only its first 72 bytes with the account’s never matches (400, no session), the exact one does', async () => {
    const base = BASE72;
    expect(Buffer.byteLength(base)).toBe(72);
    expect((await signUp(gw.url, 'exact72@example.com', base)).status).toBe(201);
    const attack = `${base}${'y'.repeat(23)}`; // 95 characters
    const res = await signIn(gw.url, 'exact72@example.com', attack);
    expect([res.status, res.json.code]).toEqual([400, 'password_too_long']);
    expect(res.headers['set-cookie']).toBeUndefined();
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), async (suffix) => {
        const tried = await signIn(gw.url, ' EXACT72@example.com', `${base}${suffix}`);
        expect(tried.status).toBe(400);
        expect(tried.headers['set-cookie']).toBeUndefined();
      }),
      { numRuns: 30, seed: 72 },
    );
    expect((await signIn(gw.url, 'exact72@example.com', base)).status).toBe(200);
  });

  it('refused long passwords are not counted as failures (no hashing happened) and do not lock the account', async () => {
    for (let i = 0; i < 15; i++) expect((await signIn(gw.url, 'exact72@example.com', 'z'.repeat(73 + i))).status).toBe(400);
    expect((await signIn(gw.url, 'exact72@example.com', BASE72)).status).toBe(200);
  });
});

describe('unauthenticated password hashing is bounded per process', () => {
  it('40 sign-ins at once never run more than OWNER_PASSWORD_CHECKS_MAX (2) hashes together, and all are answered', async () => {
    const gw = await startOwnerGateway('owner-pw-gate', { BCRYPT_ROUNDS: '8', OWNER_PASSWORD_CHECKS_MAX: '2', OWNER_PASSWORD_CHECK_WAIT_MS: '60000' });
    try {
      const gauge = gw.app.get(OwnerPasswords, { strict: false }).hashing;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => signIn(gw.url, `flood-${i}@example.com`, 'not the password', { from: `127.0.6.${i + 1}` })),
      );
      expect(results.map((r) => r.status)).toEqual(Array<number>(40).fill(401));
      expect(gauge).toEqual({ running: 0, peak: 2 });
    } finally {
      await gw.close();
    }
  });

  it('excess sign-ins wait briefly, then get 503 sign_in_busy with Retry-After (and are not counted as failures)', async () => {
    const gw = await startOwnerGateway('owner-pw-busy', { BCRYPT_ROUNDS: '10', OWNER_PASSWORD_CHECKS_MAX: '1', OWNER_PASSWORD_CHECK_WAIT_MS: '150' });
    try {
      const gauge = gw.app.get(OwnerPasswords, { strict: false }).hashing;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => signIn(gw.url, `busy-${i}@example.com`, 'wrong, and many of them', { from: '127.0.6.200' })),
      );
      const busy = results.filter((r) => r.status === 503);
      const failed = results.filter((r) => r.status === 401);
      expect(busy.length + failed.length).toBe(40);
      expect(busy.length).toBeGreaterThan(0);
      for (const res of busy) expect([res.json.code, res.headers['retry-after'], res.json.retryAfterSeconds]).toEqual(['sign_in_busy', '1', 1]);
      expect(gauge.peak).toBe(1);
      // Only the attempts that were really checked count against the address.
      const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        expect(Number(await redis.get(`${gw.limiterPrefix}address:127.0.6.200`))).toBe(failed.length);
      } finally {
        redis.disconnect();
      }
    } finally {
      await gw.close();
    }
  });

  it('an unknown email costs a hash of the configured cost, like a wrong password for a known one (interleaved medians within 1.6×)', async () => {
    const gw = await startOwnerGateway('owner-pw-timing', { BCRYPT_ROUNDS: '7' });
    try {
      // Two known accounts, so 11 wrong passwords stay under the per-account limit.
      for (const email of ['known-0@example.com', 'known-1@example.com']) expect((await signUp(gw.url, email, RIGHT)).status).toBe(201);
      const time = async (email: string, from: string) => {
        const started = process.hrtime.bigint();
        expect((await signIn(gw.url, email, 'not the password', { from })).status).toBe(401);
        return Number(process.hrtime.bigint() - started) / 1e6;
      };
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 11; i++) {
        known.push(await time(`known-${i % 2}@example.com`, `127.0.7.${i + 1}`));
        unknown.push(await time(`unknown-${i}@example.com`, `127.0.7.${i + 1}`));
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const ratio = median(unknown) / median(known);
      expect(ratio).toBeGreaterThan(0.6);
      expect(ratio).toBeLessThan(1.6);
    } finally {
      await gw.close();
    }
  });
});
