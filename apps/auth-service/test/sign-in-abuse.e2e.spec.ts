import pg from 'pg';
import { TEST_SERVER_URL } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

/**
 * Issue 29 against a real auth-service (HTTP, Postgres, Redis): redirect targets with control
 * characters, reset tokens that outlive a new password, and sign-in without a per-account limit.
 * The test process is the trusted proxy; X-Forwarded-For is the attacker's address.
 */
describe('sign-in abuse (issue 29)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let db: pg.Client;
  let n = 0;
  /** A fresh client address for each client, so the address limits stay out of the way unless a test wants them. */
  const client = (address = `198.51.100.${++n}`) => new TestClient(shop.authUrl, originOf('shop'), address);
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);
  const emailsTo = (to: string) => h.prisma.email.findMany({ where: { applicationId: shop.applicationId, toAddress: to }, orderBy: { createdAt: 'asc' } });
  const tokenOf = (text: string) => new URL(/(http\S+)/.exec(text)![1]!).pathname.split('/').pop()!;

  beforeAll(async () => {
    h = await startAuthHarness('authabuse', {
      AUTH_TRUSTED_PROXIES: '127.0.0.1',
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '9',
      AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: '5',
      AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS: '2',
      AUTH_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS: '4',
      AUTH_SIGN_IN_ADDRESS_MAX_FAILURES: '6',
      AUTH_DEV_EMAILS_PER_HOUR: '100',
    });
    shop = await h.createTenant('shop');
    const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: shop.applicationId } });
    db = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await h?.close();
  });

  describe('redirect targets', () => {
    const HOSTILE = ['/\t/evil.example', '/\t\\evil.example', '/\n/evil.example', '/\\evil.example', '/%2f/evil.example', '/%2e//evil.example'];

    it('a browser-ambiguous callbackURL on sign-in is 400 before any session exists (a newline used to be a 500 after one was made)', async () => {
      expect((await client().signUp('redirect@example.com', 'redirect password')).status).toBe(200);
      const sessionsBefore = await count(`SELECT count(*) AS n FROM service_auth.sessions`);
      for (const callbackURL of HOSTILE) {
        const res = await client().post('/sign-in/email', { email: 'redirect@example.com', password: 'redirect password', callbackURL });
        expect([callbackURL, res.status, await res.json(), res.headers.get('location'), res.headers.getSetCookie()]).toEqual([
          callbackURL,
          400,
          { code: 'INVALID_CALLBACK_URL', message: expect.stringContaining('Invalid callbackURL') },
          null,
          [],
        ]);
      }
      expect(await count(`SELECT count(*) AS n FROM service_auth.sessions`)).toBe(sessionsBefore);
      // A legitimate target comes back normalised, in the body and the Location header.
      const ok = await client().post('/sign-in/email', { email: 'redirect@example.com', password: 'redirect password', callbackURL: '/shop/../welcome?x=1' });
      expect([ok.status, (await ok.json()).url, ok.headers.get('location')]).toEqual([200, '/welcome?x=1', '/welcome?x=1']);
    });

    it('every other place a target is accepted refuses them too: sign-up, reset request, verification email, social, the emailed links', async () => {
      const cases: [string, () => Promise<Response>, string][] = [];
      for (const target of HOSTILE) {
        cases.push(
          [
            'sign-up callbackURL',
            () => client().post('/sign-up/email', { email: `new${++n}@example.com`, password: 'sign up password', name: 'N', callbackURL: target }),
            'INVALID_CALLBACK_URL',
          ],
          [
            'request-password-reset redirectTo',
            () => client().post('/request-password-reset', { email: 'redirect@example.com', redirectTo: target }),
            'INVALID_REDIRECT_URL',
          ],
          [
            'send-verification-email callbackURL',
            () => client().post('/send-verification-email', { email: 'redirect@example.com', callbackURL: target }),
            'INVALID_CALLBACK_URL',
          ],
          ['social callbackURL', () => client().post('/sign-in/social', { provider: 'google', callbackURL: target }), 'INVALID_CALLBACK_URL'],
          ['social errorCallbackURL', () => client().post('/sign-in/social', { provider: 'google', errorCallbackURL: target }), 'INVALID_ERROR_CALLBACK_URL'],
          [
            'social newUserCallbackURL',
            () => client().post('/sign-in/social', { provider: 'google', newUserCallbackURL: target }),
            'INVALID_NEW_USER_CALLBACK_URL',
          ],
          [
            'reset link callbackURL',
            () => client().get(`/reset-password/AbCdEfGh12345678AbCdEfGh?callbackURL=${encodeURIComponent(target)}`),
            'INVALID_CALLBACK_URL',
          ],
          ['verify-email callbackURL', () => client().get(`/verify-email?token=x&callbackURL=${encodeURIComponent(target)}`), 'INVALID_CALLBACK_URL'],
        );
      }
      const wrong: string[] = [];
      for (const [name, send, code] of cases) {
        const res = await send();
        const body = (await res.json()) as { code?: string };
        if (res.status !== 400 || body.code !== code || res.headers.get('location'))
          wrong.push(`${name}: ${res.status} ${body.code} ${res.headers.get('location')}`);
      }
      expect(wrong).toEqual([]);
      expect(await emailsTo('redirect@example.com')).toEqual([]);
      expect(await count(`SELECT count(*) AS n FROM service_auth.users WHERE email LIKE 'new%'`)).toBe(0);
    });
  });

  describe('reset tokens', () => {
    it('a new password (by reset or by change) ends every outstanding reset link, and other sessions', async () => {
      const victim = client();
      expect((await victim.signUp('tokens@example.com', 'first password')).status).toBe(200);
      const laptop = client();
      expect((await laptop.signIn('tokens@example.com', 'first password')).status).toBe(200);
      for (let i = 0; i < 3; i++)
        expect((await client().post('/request-password-reset', { email: 'tokens@example.com', redirectTo: '/reset' })).status).toBe(200);
      const [old, older, newest] = (await emailsTo('tokens@example.com')).map((e) => tokenOf(e.textBody)).reverse();
      const userId = (await db.query<{ id: string }>(`SELECT id FROM service_auth.users WHERE email = 'tokens@example.com'`)).rows[0]!.id;
      const outstanding = () => count(`SELECT count(*) AS n FROM service_auth.verifications WHERE identifier LIKE 'reset-password:%' AND value = $1`, [userId]);
      expect(await outstanding()).toBe(3);

      // The victim resets with the newest link: the two older ones stop working, every session ends.
      expect(await (await client().post('/reset-password', { token: newest, newPassword: 'second password' })).json()).toEqual({ status: true });
      expect(await outstanding()).toBe(0);
      expect(await (await laptop.get('/get-session')).json()).toBeNull();
      expect(await (await victim.get('/get-session')).json()).toBeNull();
      for (const token of [old, older]) {
        const res = await client().post('/reset-password', { token, newPassword: 'attacker password' });
        expect([res.status, (await res.json()).code]).toEqual([400, 'INVALID_TOKEN']);
      }

      // A link requested later, then a password change: the link is dead, the other session too.
      const phone = client();
      expect((await phone.signIn('tokens@example.com', 'second password')).status).toBe(200);
      const desk = client();
      expect((await desk.signIn('tokens@example.com', 'second password')).status).toBe(200);
      expect((await client().post('/request-password-reset', { email: 'tokens@example.com' })).status).toBe(200);
      const later = tokenOf((await emailsTo('tokens@example.com')).at(-1)!.textBody);
      expect(
        (await phone.post('/change-password', { currentPassword: 'second password', newPassword: 'third password', revokeOtherSessions: true })).status,
      ).toBe(200);
      expect(await outstanding()).toBe(0);
      expect(await (await desk.get('/get-session')).json()).toBeNull();
      expect(await (await phone.get('/get-session')).json()).toMatchObject({ user: { email: 'tokens@example.com' } });
      const res = await client().post('/reset-password', { token: later, newPassword: 'attacker password' });
      expect([res.status, (await res.json()).code]).toEqual([400, 'INVALID_TOKEN']);
      expect((await client().signIn('tokens@example.com', 'third password')).status).toBe(200);
      expect((await client().signIn('tokens@example.com', 'attacker password')).status).toBe(401);
    });
  });

  describe('per-account and per-address sign-in limits', () => {
    /** 108 wrong passwords, 9 from each of 12 addresses, all at once: the attack. */
    const spray = async (email: string, firstOctet: number) => {
      const statuses = await Promise.all(
        Array.from({ length: 108 }, (_, i) =>
          client(`${firstOctet}.0.113.${i % 12}`)
            .signIn(email, `guess ${i}`)
            .then(async (r) => ({ status: r.status, retry: r.headers.get('x-retry-after'), body: await r.text() })),
        ),
      );
      return statuses;
    };

    it('108 wrong passwords from 12 addresses: 5 are evaluated, 103 answered 429 + x-retry-after — for a known account and an unknown one alike', async () => {
      expect((await client().signUp('locked@example.com', 'the right password')).status).toBe(200);
      const known = await spray('locked@example.com', 203);
      // The right password waits too, until the lock ends.
      expect((await client().signIn('locked@example.com', 'the right password')).status).toBe(429);
      const unknown = await spray('nobody-here@example.com', 192);
      for (const outcomes of [known, unknown]) {
        const tally = outcomes.reduce<Record<number, number>>((t, o) => ({ ...t, [o.status]: (t[o.status] ?? 0) + 1 }), {});
        expect(tally).toEqual({ 401: 5, 429: 103 });
        // The wait is the lock's (2 s here), also while the last verdicts are still being reached.
        for (const o of outcomes.filter((o) => o.status === 429))
          expect([o.body, o.retry]).toEqual(['{"message":"Too many requests. Please try again later."}', expect.stringMatching(/^[12]$/)]);
      }
      // Once the lock ended, the right password signs in (and clears the count).
      await new Promise((r) => setTimeout(r, 2100));
      expect((await client().signIn('locked@example.com', 'the right password')).status).toBe(200);
    });

    it('the next lock within a day is twice as long (capped); a password reset lifts it at once', async () => {
      expect((await client().signUp('doubled@example.com', 'the right password')).status).toBe(200);
      const lockFor = async () => {
        for (let i = 0; i < 5; i++) expect((await client().signIn('doubled@example.com', 'wrong')).status).toBe(401);
        const refused = await client().signIn('doubled@example.com', 'the right password');
        expect(refused.status).toBe(429);
        return Number(refused.headers.get('x-retry-after'));
      };
      expect(await lockFor()).toBe(2);
      await new Promise((r) => setTimeout(r, 2100));
      expect(await lockFor()).toBe(4);
      // The owner of the address book resets: locked no longer, whatever a stranger keeps sending.
      expect((await client().post('/request-password-reset', { email: 'doubled@example.com' })).status).toBe(200);
      const token = tokenOf((await emailsTo('doubled@example.com')).at(-1)!.textBody);
      expect((await client().post('/reset-password', { token, newPassword: 'after the reset' })).status).toBe(200);
      expect((await client().signIn('doubled@example.com', 'after the reset')).status).toBe(200);
    });

    it('an IPv6 /64 is one address: for failures over many accounts and for the attempts window', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await client(`2001:db8:29:1::${i + 1}`).signIn(`person${i}@example.com`, 'wrong')).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
      expect((await client('2001:db8:29:1:ffff:ffff:ffff:fffe').signIn('someone@example.com', 'wrong')).status).toBe(429);
      expect((await client('2001:db8:29:2::1').signIn('someone@example.com', 'wrong')).status).toBe(401);
      // Sign-ups are attempts (9 per 10 s per address), not failures: the 10th from the same /64 waits.
      const signUps: number[] = [];
      for (let i = 0; i < 10; i++)
        signUps.push((await client(`2001:db8:29:3::${(i + 1).toString(16)}`).signUp(`v6-${i}@example.com`, 'a long passphrase')).status);
      expect(signUps).toEqual([...Array(9).fill(200), 429]);
    });
  });
});
