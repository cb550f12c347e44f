import { createHash } from 'node:crypto';
import pg from 'pg';
import { createAuthClient } from 'better-auth/client';
import { emailOTPClient } from 'better-auth/client/plugins';
import { TEST_SERVER_URL } from '@slipway/testing';
import { browserLikeFetch, startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

type Tenant = { applicationId: string; slug: string; authUrl: string };

const browser = (origin: string) => browserLikeFetch(origin);

describe('email codes (Better Auth’s emailOTPClient against the service)', () => {
  let h: AuthHarness;
  let shop: Tenant;
  let blog: Tenant;
  let plain: Tenant;
  const dbs = new Map<string, pg.Client>();

  const on = { plugins: { emailOTP: { enabled: true } } };
  const clientFor = (tenant: Tenant) => {
    const b = browser(originOf(tenant.slug));
    return { ...b, client: createAuthClient({ baseURL: tenant.authUrl, plugins: [emailOTPClient()], fetchOptions: { customFetchImpl: b.impl } }) };
  };
  const emailsTo = (tenant: Tenant, to: string) =>
    h.prisma.email.findMany({ where: { applicationId: tenant.applicationId, toAddress: to }, orderBy: { createdAt: 'desc' } });
  const lastCode = async (tenant: Tenant, to: string) => {
    const [email] = await emailsTo(tenant, to);
    expect(email).toMatchObject({ kind: 'email_otp', status: 'outbox' });
    return /\b(\d{6})\b/.exec(email!.textBody)![1]!;
  };
  const tenantQuery = async (tenant: Tenant, sql: string, params: unknown[] = []) => {
    let client = dbs.get(tenant.applicationId);
    if (!client) {
      const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: tenant.applicationId } });
      client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
      await client.connect();
      dbs.set(tenant.applicationId, client);
    }
    return (await client.query(sql, params)).rows;
  };
  const codeRow = async (tenant: Tenant, identifier: string) =>
    (await tenantQuery(tenant, `SELECT value, expires_at - created_at AS ttl FROM service_auth.verifications WHERE identifier = $1`, [identifier]))[0];
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  beforeAll(async () => {
    // The sign-in limits as shipped for the account (5 failures, then a lock); the address limit stays out of the way.
    h = await startAuthHarness('authemailotp', { AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: '5' });
    shop = await h.createTenant('shop', { settings: on });
    blog = await h.createTenant('blog', { settings: on });
    plain = await h.createTenant('plain');
  });
  afterAll(async () => {
    for (const client of dbs.values()) await client.end();
    await h?.close();
  });

  it('signs a new user in with an emailed code, once: the code stored as a hash with its attempts', async () => {
    const { client } = clientFor(shop);
    const sent = await client.emailOtp.sendVerificationOtp({ email: 'Ana@Example.com', type: 'sign-in' });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({ success: true });
    const code = await lastCode(shop, 'ana@example.com');
    const row = await codeRow(shop, 'sign-in-otp-ana@example.com');
    expect(row.value).toMatch(/^[0-9a-f]{64}:0$/);
    expect(row.value).not.toContain(code);
    expect(row.ttl).toMatchObject({ minutes: 5 });

    const signedIn = await client.signIn.emailOtp({ email: 'ana@example.com', otp: code });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toMatchObject({ token: expect.any(String), user: { email: 'ana@example.com', emailVerified: true } });
    expect((await client.getSession()).data?.user.email).toBe('ana@example.com');
    expect(await codeRow(shop, 'sign-in-otp-ana@example.com')).toBeUndefined();

    const again = await clientFor(shop).client.signIn.emailOtp({ email: 'ana@example.com', otp: code });
    expect(again.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
  });

  it('verifies an email with a code; the session sees it at once', async () => {
    const { client } = clientFor(shop);
    expect((await client.signUp.email({ email: 'ben@example.com', password: 'ben password 1', name: 'Ben' })).error).toBeNull();
    expect((await client.getSession()).data?.user.emailVerified).toBe(false);
    await client.emailOtp.sendVerificationOtp({ email: 'ben@example.com', type: 'email-verification' });
    const code = await lastCode(shop, 'ben@example.com');
    const checked = await client.emailOtp.checkVerificationOtp({ email: 'ben@example.com', type: 'email-verification', otp: code });
    expect(checked.data).toEqual({ success: true });
    const verified = await client.emailOtp.verifyEmail({ email: 'ben@example.com', otp: code });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ status: true, token: null, user: { email: 'ben@example.com', emailVerified: true } });
    expect((await client.getSession()).data?.user.emailVerified).toBe(true);
    expect(await tenantQuery(shop, `SELECT email_verified FROM service_auth.users WHERE email = 'ben@example.com'`)).toEqual([{ email_verified: true }]);
  });

  it('resets a password with a code as the emailed link does: every session revoked, reset links dead', async () => {
    const a = clientFor(shop);
    expect((await a.client.signUp.email({ email: 'cai@example.com', password: 'old password 1', name: 'Cai' })).error).toBeNull();
    const b = new TestClient(shop.authUrl, originOf('shop'));
    expect((await b.signIn('cai@example.com', 'old password 1')).status).toBe(200);
    await b.post('/request-password-reset', { email: 'cai@example.com', redirectTo: '/reset' });
    expect(await tenantQuery(shop, `SELECT count(*)::int AS n FROM service_auth.verifications WHERE identifier LIKE 'reset-password:%'`)).toEqual([{ n: 1 }]);

    const requested = await a.client.forgetPassword.emailOtp({ email: 'cai@example.com' });
    expect(requested.data).toEqual({ success: true });
    const code = await lastCode(shop, 'cai@example.com');
    const short = await a.client.emailOtp.resetPassword({ email: 'cai@example.com', otp: code, password: 'short' });
    expect(short.error).toMatchObject({ status: 400, code: 'PASSWORD_TOO_SHORT' });
    const reset = await a.client.emailOtp.resetPassword({ email: 'cai@example.com', otp: code, password: 'new password 2' });
    expect(reset.error).toBeNull();
    expect(reset.data).toEqual({ success: true });

    expect((await a.client.getSession()).data).toBeNull();
    expect(await (await b.get('/get-session')).json()).toBeNull();
    expect(await tenantQuery(shop, `SELECT count(*)::int AS n FROM service_auth.verifications WHERE identifier LIKE 'reset-password:%'`)).toEqual([{ n: 0 }]);
    expect((await b.signIn('cai@example.com', 'old password 1')).status).toBe(401);
    expect((await b.signIn('cai@example.com', 'new password 2')).status).toBe(200);
    const replay = await a.client.emailOtp.resetPassword({ email: 'cai@example.com', otp: code, password: 'new password 3' });
    expect(replay.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
  });

  it('a reset code dies when the password changes another way (the emailed link, change-password)', async () => {
    const a = clientFor(shop);
    expect((await a.client.signUp.email({ email: 'col@example.com', password: 'old password 1', name: 'Col' })).error).toBeNull();
    expect((await a.client.forgetPassword.emailOtp({ email: 'col@example.com' })).data).toEqual({ success: true });
    const code = await lastCode(shop, 'col@example.com');
    expect(await codeRow(shop, 'forget-password-otp-col@example.com')).toBeDefined();
    expect((await a.client.changePassword({ currentPassword: 'old password 1', newPassword: 'new password 2' })).error).toBeNull();
    expect(await codeRow(shop, 'forget-password-otp-col@example.com')).toBeUndefined();
    const late = await a.client.emailOtp.resetPassword({ email: 'col@example.com', otp: code, password: 'attacker password' });
    expect(late.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
  });

  it('stores a keyed digest of a code: its plain SHA-256 (a million guesses away) is not what the database holds', async () => {
    const { client } = clientFor(shop);
    await client.emailOtp.sendVerificationOtp({ email: 'kit@example.com', type: 'sign-in' });
    const code = await lastCode(shop, 'kit@example.com');
    const stored = (await codeRow(shop, 'sign-in-otp-kit@example.com')).value.split(':')[0];
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toBe(createHash('sha256').update(code).digest('hex'));
  });

  it('refuses a wrong code; the third wrong attempt kills the code (TOO_MANY_ATTEMPTS), and an expired code', async () => {
    const { client } = clientFor(shop);
    await client.emailOtp.sendVerificationOtp({ email: 'dee@example.com', type: 'sign-in' });
    const code = await lastCode(shop, 'dee@example.com');
    for (let i = 1; i <= 3; i++) {
      const bad = await client.signIn.emailOtp({ email: 'dee@example.com', otp: wrong(code) });
      expect(bad.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
      expect((await codeRow(shop, 'sign-in-otp-dee@example.com')).value).toMatch(new RegExp(`:${i}$`));
    }
    const dead = await client.signIn.emailOtp({ email: 'dee@example.com', otp: code });
    expect(dead.error).toMatchObject({ status: 403, code: 'TOO_MANY_ATTEMPTS' });
    expect(await codeRow(shop, 'sign-in-otp-dee@example.com')).toBeUndefined();
    expect((await client.getSession()).data).toBeNull();

    await client.emailOtp.sendVerificationOtp({ email: 'eve@example.com', type: 'sign-in' });
    const late = await lastCode(shop, 'eve@example.com');
    await tenantQuery(shop, `UPDATE service_auth.verifications SET expires_at = now() - interval '1 second' WHERE identifier = 'sign-in-otp-eve@example.com'`);
    const expired = await client.signIn.emailOtp({ email: 'eve@example.com', otp: late });
    expect(expired.error).toMatchObject({ status: 400, code: 'OTP_EXPIRED' });
    expect((await client.getSession()).data).toBeNull();
  });

  it('locks the account’s codes after the sign-in limit’s failures, whatever the code (per account, across codes)', async () => {
    const { client } = clientFor(shop);
    await client.emailOtp.sendVerificationOtp({ email: 'fay@example.com', type: 'sign-in' });
    const first = await lastCode(shop, 'fay@example.com');
    for (let i = 0; i < 3; i++) await client.signIn.emailOtp({ email: 'fay@example.com', otp: wrong(first) });
    await client.signIn.emailOtp({ email: 'fay@example.com', otp: first }); // the fourth failure: the dead code
    await client.emailOtp.sendVerificationOtp({ email: 'fay@example.com', type: 'sign-in' });
    const second = await lastCode(shop, 'fay@example.com');
    expect((await client.signIn.emailOtp({ email: 'fay@example.com', otp: wrong(second) })).error).toMatchObject({ code: 'INVALID_OTP' });
    const locked = await client.signIn.emailOtp({ email: 'fay@example.com', otp: second });
    expect(locked.error).toMatchObject({ status: 429 });
    expect((await codeRow(shop, 'sign-in-otp-fay@example.com')).value).toMatch(/:1$/);
  });

  it('answers an unknown address exactly as a known one, and sends it nothing', async () => {
    const { client } = clientFor(shop);
    for (const type of ['email-verification', 'forget-password'] as const) {
      const known = await client.emailOtp.sendVerificationOtp({ email: 'ana@example.com', type });
      const unknown = await client.emailOtp.sendVerificationOtp({ email: 'ghost@example.com', type });
      expect(unknown.data).toEqual(known.data);
    }
    const reset = await client.forgetPassword.emailOtp({ email: 'ghost@example.com' });
    expect(reset.data).toEqual({ success: true });
    expect(await emailsTo(shop, 'ghost@example.com')).toEqual([]);
    expect(await tenantQuery(shop, `SELECT identifier FROM service_auth.verifications WHERE identifier LIKE '%ghost@example.com'`)).toEqual([]);
    const guess = await client.emailOtp.resetPassword({ email: 'ghost@example.com', otp: '123456', password: 'a long password' });
    expect(guess.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
  });

  it('refuses a code issued by another application (each keeps its codes in its own database)', async () => {
    const s = clientFor(shop);
    await s.client.emailOtp.sendVerificationOtp({ email: 'hal@example.com', type: 'sign-in' });
    const code = await lastCode(shop, 'hal@example.com');
    const b = clientFor(blog);
    const refused = await b.client.signIn.emailOtp({ email: 'hal@example.com', otp: code });
    expect(refused.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
    expect(b.jar.size).toBe(0);
    expect(await tenantQuery(blog, `SELECT 1 FROM service_auth.users WHERE email = 'hal@example.com'`)).toEqual([]);
    expect((await s.client.signIn.emailOtp({ email: 'hal@example.com', otp: code })).error).toBeNull();
  });

  it('is an unknown path while the plugin is off', async () => {
    const { client } = clientFor(plain);
    expect((await client.emailOtp.sendVerificationOtp({ email: 'ivy@example.com', type: 'sign-in' })).error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect((await client.signIn.emailOtp({ email: 'ivy@example.com', otp: '123456' })).error).toMatchObject({ status: 404 });
    expect((await client.emailOtp.verifyEmail({ email: 'ivy@example.com', otp: '123456' })).error).toMatchObject({ status: 404 });
    expect((await client.emailOtp.resetPassword({ email: 'ivy@example.com', otp: '123456', password: 'a long password' })).error).toMatchObject({
      status: 404,
    });
    expect((await client.forgetPassword.emailOtp({ email: 'ivy@example.com' })).error).toMatchObject({ status: 404 });
    expect(await h.prisma.email.count({ where: { applicationId: plain.applicationId } })).toBe(0);
  });
});
