/**
 * The sign-in service under attack (issue 29), from the attacker's position against the platform
 * as `pnpm start` runs it (one platform for the whole file, default limits): plain HTTP to the
 * sign-in service's public port, from real client addresses (the TCP peer: loopback addresses
 * 127.0.0.2–127.0.0.13 and 127.0.0.50–127.0.0.61 stand for machines of a botnet).
 * - A `callbackURL` with a tab, newline or backslash (`/\t/evil.example`) — which a browser reads as
 *   `//evil.example` — is 400 before any session exists (it was 200 with the target echoed; a
 *   newline was a 500 after the session had been made).
 * - An older reset link stops working once the victim reset with a newer one and then changed the
 *   password (it used to set the password); the attacker's session ends with the reset.
 * - 108 wrong passwords for one account from 12 addresses at once: only a handful are evaluated,
 *   the rest are 429 with `x-retry-after`, for a known and an unknown account alike; the right
 *   password waits as well; a password reset lets the victim in at once. Addresses in one IPv6 /64
 *   (visitors the application's own server vouches for) are one address.
 * The victim's mailbox is the platform's outbox (`emails`), read as the operator.
 */
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { queryRows } from '@slipway/testing';
import { HostilePlatform, type Account } from './support/platform.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const VICTIM = 'victim@hostile.example';
/** LaunchedPlatform.signUp's password. */
const VICTIM_PASSWORD = 'a long passphrase';
/** Twelve machines (and twelve others for the second burst: each address may try 9 times per 10 s whatever the account). */
const botnet = (first: number) => Array.from({ length: 12 }, (_, i) => `127.0.0.${first + i}`);

describe('the sign-in service against redirect, reset-token and guessing attacks (issue 29)', () => {
  let platform: HostilePlatform | undefined;
  let account: Account;

  /** A request to the application's sign-in service from `from` (the TCP source address), as a page of the application sends it. */
  const call = (method: 'GET' | 'POST', path: string, body: unknown, from: string, headers: Record<string, string> = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? '' : JSON.stringify(body);
      const req = request(
        {
          host: '127.0.0.1',
          port: platform!.ports.auth,
          localAddress: from,
          method,
          path: `/a/${account.slug}${path}`,
          headers: {
            origin: account.appUrl,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
            ...headers,
          },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  const post = (path: string, body: unknown, from = '127.0.0.1', headers: Record<string, string> = {}) => call('POST', path, body, from, headers);
  const signIn = (email: string, password: string, from?: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
    post('/sign-in/email', { email, password, ...extra }, from, headers);
  const cookieOf = (answer: Answer) => ((answer.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split(';')[0]!).join('; ');
  /** The session a cookie holds (`null` when none), as the application's page asks for it. */
  const session = async (cookie: string) =>
    JSON.parse((await call('GET', '/get-session', undefined, '127.0.0.1', { cookie })).body) as { user?: { email?: string } } | null;
  /** The tenant's own database, as the operator (to count sessions and reset tokens). */
  const tenantRows = async <T extends Record<string, unknown>>(sql: string, params: unknown[] = []) => {
    const [{ database_name: name }] = await platform!.query<{ database_name: string }>(
      'SELECT database_name FROM application_databases WHERE application_id = $1',
      [account.applicationId],
    );
    const url = new URL((await platform!.runtime()).databaseUrl);
    url.pathname = `/${name}`;
    return queryRows<T>(url.toString(), sql, params);
  };
  /** Reset links sent to `to`, oldest first (the victim's mailbox). */
  const resetTokens = async (to: string) =>
    (
      await platform!.query<{ text_body: string }>(
        `SELECT text_body FROM emails WHERE application_id = $1 AND to_address = $2 AND kind = 'password_reset' ORDER BY created_at`,
        [account.applicationId, to],
      )
    ).map((e) => new URL(/(http\S+)/.exec(e.text_body)![1]!).pathname.split('/').pop()!);

  beforeAll(async () => {
    platform = await HostilePlatform.start('signin-abuse');
    account = await platform.bootstrap('owner@signin-abuse.example', 'Sign-in Abuse');
    await platform.enableSignIn(account);
    const signedUp = await platform.signUp(account, VICTIM);
    if (signedUp.status !== 200) throw new Error(`the victim could not sign up: ${signedUp.status} ${signedUp.body}`);
  }, 600_000);

  afterAll(async () => {
    await platform?.stop();
  }, 120_000);

  it('a callbackURL a browser reads as another host is 400 before any session exists', async () => {
    // What the victim's browser does with the target when the service echoes it (WHATWG URL, as browsers parse it).
    expect(new URL('/\t/evil.example', account.appUrl).host).toBe('evil.example');
    expect(new URL('/\t\\evil.example', account.appUrl).host).toBe('evil.example');
    const sessions = async () => Number((await tenantRows<{ n: string }>('SELECT count(*) AS n FROM service_auth.sessions'))[0]!.n);
    const before = await sessions();
    const answers: string[] = [];
    for (const callbackURL of ['/\t/evil.example', '/\t\\evil.example', '/\n/evil.example', '/\\evil.example']) {
      const res = await signIn(VICTIM, VICTIM_PASSWORD, '127.0.0.20', { callbackURL });
      answers.push(
        `${JSON.stringify(callbackURL)} → ${res.status} ${res.body} location=${res.headers['location'] ?? '-'} cookie=${cookieOf(res) ? 'set' : '-'}`,
      );
    }
    console.log(`redirect targets:\n${answers.join('\n')}`);
    expect(answers.filter((a) => !/→ 400 \{"code":"INVALID_CALLBACK_URL","message":"Invalid callbackURL[^"]*"\} location=- cookie=-$/.test(a))).toEqual([]);
    expect(await sessions()).toBe(before);
    // The application's own page still works, and comes back normalised.
    const ok = await signIn(VICTIM, VICTIM_PASSWORD, '127.0.0.20', { callbackURL: '/account/../welcome' });
    expect([ok.status, JSON.parse(ok.body).url, ok.headers['location']]).toEqual([200, '/welcome', '/welcome']);
  });

  it('an older reset link does not survive a newer reset and a password change; the attacker’s session ends', async () => {
    const email = 'reset-victim@hostile.example';
    expect((await platform!.signUp(account, email)).status).toBe(200);
    // The attacker knows the password for now (a leaked one) and holds a session.
    const attacker = cookieOf(await signIn(email, VICTIM_PASSWORD, '127.0.0.21'));
    expect((await session(attacker))?.user?.email).toBe(email);
    // Two reset links reach the mailbox (one asked for by the attacker, whose copy leaks); the victim uses the newer.
    for (let i = 0; i < 2; i++) expect((await post('/request-password-reset', { email, redirectTo: '/reset' }, '127.0.0.22')).status).toBe(200);
    const [older, newer] = await resetTokens(email);
    expect((await post('/reset-password', { token: newer, newPassword: 'victim took it back' }, '127.0.0.22')).status).toBe(200);
    expect(await session(attacker)).toBeNull();
    const victim = cookieOf(await signIn(email, 'victim took it back', '127.0.0.22'));
    expect(
      (await post('/change-password', { currentPassword: 'victim took it back', newPassword: 'and changed it again' }, '127.0.0.22', { cookie: victim }))
        .status,
    ).toBe(200);

    const stale = await post('/reset-password', { token: older, newPassword: 'attacker sets this' }, '127.0.0.21');
    console.log(`older reset link after a reset and a change: ${stale.status} ${stale.body}`);
    expect([stale.status, JSON.parse(stale.body).code]).toEqual([400, 'INVALID_TOKEN']);
    expect((await signIn(email, 'attacker sets this', '127.0.0.21')).status).toBe(401);
    expect((await signIn(email, 'and changed it again', '127.0.0.22')).status).toBe(200);
    const userId = (await tenantRows<{ id: string }>('SELECT id FROM service_auth.users WHERE email = $1', [email]))[0]!.id;
    expect(await tenantRows(`SELECT 1 FROM service_auth.verifications WHERE identifier LIKE 'reset-password:%' AND value = $1`, [userId])).toEqual([]);
  });

  it('108 wrong passwords from 12 addresses in one burst: a handful evaluated, the rest 429 + x-retry-after, the same for an unknown account; a reset lets the victim in', async () => {
    const burst = async (email: string, addresses: string[]) => {
      const began = performance.now();
      const answers = await Promise.all(Array.from({ length: 108 }, (_, i) => signIn(email, `guess number ${i}`, addresses[i % addresses.length])));
      const tally: Record<string, number> = {};
      for (const a of answers) {
        const kind = a.status === 429 ? `429 x-retry-after=${String(a.headers['x-retry-after'])}` : String(a.status);
        tally[kind] = (tally[kind] ?? 0) + 1;
      }
      console.log(`${email}: 108 guesses from ${addresses.length} addresses in ${Math.round(performance.now() - began)} ms → ${JSON.stringify(tally)}`);
      return answers;
    };
    const known = await burst(VICTIM, botnet(2));
    // AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES (5): each guess is reserved before any hashing, so parallel ones cannot slip past.
    expect(known.filter((a) => a.status === 401)).toHaveLength(5);
    expect(known.filter((a) => a.status !== 401 && a.status !== 429)).toEqual([]);
    for (const a of known.filter((a) => a.status === 429))
      expect([a.body, Number(a.headers['x-retry-after']) >= 1]).toEqual(['{"message":"Too many requests. Please try again later."}', true]);
    // The right password waits too: nothing is evaluated while the account is locked.
    expect((await signIn(VICTIM, VICTIM_PASSWORD, '127.0.0.30')).status).toBe(429);

    const unknown = await burst('nobody-at-all@hostile.example', botnet(50));
    const shape = (answers: Answer[]) =>
      answers
        .map((a) => a.status)
        .sort()
        .join(',');
    expect(shape(unknown)).toBe(shape(known));

    // The victim's way out: a reset (proof of the mailbox) lifts the lock at once.
    expect((await post('/request-password-reset', { email: VICTIM }, '127.0.0.31')).status).toBe(200);
    const token = (await resetTokens(VICTIM)).at(-1)!;
    expect((await post('/reset-password', { token, newPassword: 'a brand new passphrase' }, '127.0.0.31')).status).toBe(200);
    expect((await signIn(VICTIM, 'a brand new passphrase', '127.0.0.31')).status).toBe(200);
  });

  it('visitors in one IPv6 /64 count as one address (the application’s server vouches for each)', async () => {
    // The application's server relays its visitors with their addresses signed by its cookie secret
    // (@slipway/sign-in-sdk's x-slipway-client-address; written out here, libs/sign-in-sdk/src/client-address.ts).
    const env = await platform!.cli(['auth', 'env'], { SLIPWAY_TOKEN: account.ownerToken, SLIPWAY_APPLICATION_ID: account.applicationId });
    const secret = /^SERVICE_AUTH_COOKIE_SECRET=(.+)$/m.exec(env.stdout)?.[1]?.trim();
    if (!secret) throw new Error(`auth env gave no cookie secret (exit ${env.code}): ${env.stderr.slice(-500)}`);
    const vouch = (address: string) => {
      const seconds = String(Math.floor(Date.now() / 1000));
      const mac = createHmac('sha256', secret).update(`client-address\n${address}\n${seconds}`).digest('base64url');
      return { 'x-slipway-client-address': `${address};${seconds};${mac}` };
    };
    const statuses: number[] = [];
    for (let i = 1; i <= 10; i++)
      statuses.push((await signIn(`v6-${i}@hostile.example`, 'wrong guess', '127.0.0.40', {}, vouch(`2001:db8:29:1::${i}`))).status);
    console.log(`ten visitors of 2001:db8:29:1::/64 within 10 s: ${statuses.join(' ')}`);
    expect(statuses).toEqual([...Array(9).fill(401), 429]);
    // Another /64 behind the same server is another address (and proves the signatures are taken).
    expect((await signIn('v6-other@hostile.example', 'wrong guess', '127.0.0.40', {}, vouch('2001:db8:29:2::1'))).status).toBe(401);
  });
});
