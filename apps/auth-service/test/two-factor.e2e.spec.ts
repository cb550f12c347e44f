import { createHash } from 'node:crypto';
import { base32 } from '@better-auth/utils/base32';
import { createOTP } from '@better-auth/utils/otp';
import { TEST_SERVER_URL } from '@slipway/testing';
import { createAuthClient } from 'better-auth/client';
import { twoFactorClient } from 'better-auth/client/plugins';
import pg from 'pg';
import { browserLikeFetch, startAuthHarness, originOf, type AuthHarness } from './harness.js';

const PASSWORD = 'correct horse battery';
const CHALLENGE_COOKIE = '__Secure-slipway.two_factor';
const TRUST_COOKIE = '__Secure-slipway.trust_device';
const SESSION_COOKIE = '__Secure-slipway.session_token';

/** The code an authenticator app shows for `totpURI`, `offset` time steps from now (the server accepts one step either side). */
async function codeFor(totpURI: string, offset = 0): Promise<string> {
  const secret = base32.decode(new URL(totpURI).searchParams.get('secret')!);
  return createOTP(secret).hotp(Math.floor(Date.now() / 30_000) + offset);
}

const browser = (origin: string) => browserLikeFetch(origin);

describe('two-factor (Better Auth’s twoFactorClient against the service)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let other: { applicationId: string; authUrl: string };
  let plain: { applicationId: string; authUrl: string };
  const tenantClients: pg.Client[] = [];

  const clientFor = (tenant: { authUrl: string }, slug = 'shop') => {
    const b = browser(originOf(slug));
    const client = createAuthClient({ baseURL: tenant.authUrl, plugins: [twoFactorClient()], fetchOptions: { customFetchImpl: b.impl } });
    return { client, ...b };
  };

  async function tenantDb(applicationId: string): Promise<pg.Client> {
    const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId } });
    const client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
    await client.connect();
    tenantClients.push(client);
    return client;
  }

  /** A user with TOTP enrolled and verified (the code of the current step used); returns what enrolment showed. */
  async function enrolled(email: string) {
    const c = clientFor(shop);
    expect((await c.client.signUp.email({ email, password: PASSWORD, name: 'Two' })).error).toBeNull();
    const enabled = await c.client.twoFactor.enable({ password: PASSWORD });
    expect(enabled.error).toBeNull();
    const { totpURI, backupCodes } = enabled.data as { totpURI: string; backupCodes: string[] };
    expect((await c.client.twoFactor.verifyTotp({ code: await codeFor(totpURI) })).error).toBeNull();
    return { totpURI, backupCodes, owner: c };
  }

  /** A fresh browser that signed in with the password and holds the challenge cookie. */
  async function challenged(email: string, password = PASSWORD) {
    const c = clientFor(shop);
    const signIn = await c.client.signIn.email({ email, password });
    expect(signIn.error).toBeNull();
    expect(signIn.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: expect.arrayContaining(['otp']) });
    expect(c.jar.has(CHALLENGE_COOKIE)).toBe(true);
    expect(c.jar.has(SESSION_COOKIE)).toBe(false);
    return c;
  }

  beforeAll(async () => {
    h = await startAuthHarness('auth2fa', {
      AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: '5',
      AUTH_SIGN_IN_ADDRESS_MAX_FAILURES: '1000',
      AUTH_DEV_EMAILS_PER_HOUR: '100',
    });
    const plugins = { twoFactor: { enabled: true, issuer: 'Shop & Co' } };
    shop = await h.createTenant('shop', { settings: { plugins } });
    other = await h.createTenant('other', { settings: { plugins } });
    plain = await h.createTenant('plain');
  });
  afterAll(async () => {
    for (const c of tenantClients) await c.end();
    await h?.close();
  });

  it('enrols TOTP behind the password, turns on with the first code, then challenges the sign-in until a code is given', async () => {
    const c = clientFor(shop);
    await c.client.signUp.email({ email: 'tia@example.com', password: PASSWORD, name: 'Tia' });
    const wrongPassword = await c.client.twoFactor.enable({ password: 'not the password' });
    expect(wrongPassword.error).toMatchObject({ status: 400, code: 'INVALID_PASSWORD' });

    const enabled = await c.client.twoFactor.enable({ password: PASSWORD });
    expect(enabled.error).toBeNull();
    const { totpURI, backupCodes } = enabled.data as { totpURI: string; backupCodes: string[] };
    expect(totpURI).toMatch(/^otpauth:\/\/totp\/Shop%20%26%20Co:tia%40example\.com\?secret=[A-Z2-7]+&issuer=Shop\+%26\+Co&digits=6&period=30$/);
    expect(backupCodes).toHaveLength(10);
    for (const code of backupCodes) expect(code).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/);
    // Not on until a code from the app is verified (Better Auth's skipVerificationOnEnable: false).
    expect((await c.client.getSession()).data?.user.twoFactorEnabled).toBe(false);
    const plainSignIn = await clientFor(shop).client.signIn.email({ email: 'tia@example.com', password: PASSWORD });
    expect(plainSignIn.data).toMatchObject({ token: expect.any(String) });

    const wrong = await c.client.twoFactor.verifyTotp({ code: '000000' === (await codeFor(totpURI)) ? '111111' : '000000' });
    expect(wrong.error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    const first = await c.client.twoFactor.verifyTotp({ code: await codeFor(totpURI) });
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({ token: expect.any(String), user: { email: 'tia@example.com', twoFactorEnabled: true } });
    expect((await c.client.getSession()).data?.user.twoFactorEnabled).toBe(true);
    const again = await c.client.twoFactor.enable({ password: PASSWORD });
    expect(again.error).toMatchObject({ status: 400, code: 'TOTP_ALREADY_ENABLED' });
    const uri = await c.client.twoFactor.getTotpUri({ password: PASSWORD });
    expect(uri.data?.totpURI).toBe(totpURI);

    // The rows: one joinable row, the secret sealed, backup codes as digests only.
    const db = await tenantDb(shop.applicationId);
    const { rows } = await db.query(
      `SELECT t.user_id, t.secret, t.backup_codes, t.verified, u.two_factor_enabled FROM service_auth.two_factors t JOIN service_auth.users u ON u.id = t.user_id WHERE u.email = 'tia@example.com'`,
    );
    expect(rows).toHaveLength(1);
    const secretText = Buffer.from(base32.decode(new URL(totpURI).searchParams.get('secret')!)).toString();
    const stored = Buffer.from(rows[0].secret);
    expect(stored.includes(Buffer.from(secretText))).toBe(false);
    expect(stored.toString('hex')).not.toContain(Buffer.from(secretText).toString('hex'));
    expect(rows[0]).toMatchObject({ verified: true, two_factor_enabled: true });
    expect(rows[0].backup_codes).toHaveLength(10);
    for (const digest of rows[0].backup_codes) expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows[0].backup_codes)).not.toContain(backupCodes[0]);
    // Keyed: not the plain SHA-256 of a code (about 51 bits, within reach of a copy of the database).
    for (const code of backupCodes) expect(rows[0].backup_codes).not.toContain(createHash('sha256').update(code).digest('hex'));

    // A password sign-in now answers the challenge: no session cookie, a signed short-lived two-factor cookie.
    const s = clientFor(shop);
    const signIn = await s.client.signIn.email({ email: 'tia@example.com', password: PASSWORD });
    expect(signIn.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] });
    expect(s.state.setCookies).toHaveLength(1);
    expect(s.state.setCookies[0]).toMatch(/^__Secure-slipway\.two_factor=[^;]+; Max-Age=600; Path=\/a\/shop; HttpOnly; Secure; SameSite=Lax$/);
    expect((await s.client.getSession()).data).toBeNull();
    const challengeCookie = s.jar.get(CHALLENGE_COOKIE)!;

    const bad = await s.client.twoFactor.verifyTotp({ code: '12345' });
    expect(bad.error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    // The next step's code (the last one used was this step's): accepted, the session starts.
    const code = await codeFor(totpURI, 1);
    const verified = await s.client.twoFactor.verifyTotp({ code });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ token: expect.any(String), user: { email: 'tia@example.com', twoFactorEnabled: true } });
    expect(s.jar.has(CHALLENGE_COOKIE)).toBe(false);
    expect((await s.client.getSession()).data?.user.email).toBe('tia@example.com');

    // The challenge is used up; the same code is not accepted twice, even on a new challenge.
    const reuse = clientFor(shop);
    reuse.jar.set(CHALLENGE_COOKIE, challengeCookie);
    expect((await reuse.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 0) })).error).toMatchObject({
      status: 401,
      code: 'INVALID_TWO_FACTOR_COOKIE',
    });
    const replay = await challenged('tia@example.com');
    expect((await replay.client.twoFactor.verifyTotp({ code })).error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    expect((await replay.client.getSession()).data).toBeNull();
  });

  it('refuses an expired challenge, a missing one, and another application’s', async () => {
    const { totpURI } = await enrolled('exp@example.com');
    const c = await challenged('exp@example.com');
    const db = await tenantDb(shop.applicationId);
    await db.query(`UPDATE service_auth.verifications SET expires_at = now() - interval '1 second' WHERE identifier LIKE 'two-factor-challenge:%'`);
    const expired = await c.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1) });
    expect(expired.error).toMatchObject({ status: 401, code: 'INVALID_TWO_FACTOR_COOKIE' });
    expect((await c.client.getSession()).data).toBeNull();

    const none = clientFor(shop);
    expect((await none.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1) })).error).toMatchObject({
      status: 401,
      code: 'INVALID_TWO_FACTOR_COOKIE',
    });
    expect((await none.client.twoFactor.sendOtp()).error).toMatchObject({ status: 401, code: 'INVALID_TWO_FACTOR_COOKIE' });

    // A live challenge of `shop` taken to `other` (whose cookie secret and database differ).
    const live = await challenged('exp@example.com');
    const foreign = clientFor(other, 'other');
    foreign.jar.set(CHALLENGE_COOKIE, live.jar.get(CHALLENGE_COOKIE)!);
    const crossed = await foreign.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1) });
    expect(crossed.error).toMatchObject({ status: 401, code: 'INVALID_TWO_FACTOR_COOKIE' });
    expect(foreign.jar.has(SESSION_COOKIE)).toBe(false);
    // A forged value (this tenant's name, no valid signature) is refused too.
    const forged = clientFor(shop);
    forged.jar.set(CHALLENGE_COOKIE, encodeURIComponent(`${live.jar.get(CHALLENGE_COOKIE)!.split('.')[0]}.AAAA`));
    expect((await forged.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1) })).error).toMatchObject({
      status: 401,
      code: 'INVALID_TWO_FACTOR_COOKIE',
    });
    // The genuine one still works where it belongs.
    expect((await live.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1) })).error).toBeNull();
  });

  it('accepts each backup code once; new codes replace the old ones', async () => {
    const { backupCodes } = await enrolled('bob@example.com');
    const c = await challenged('bob@example.com');
    const used = await c.client.twoFactor.verifyBackupCode({ code: backupCodes[0]! });
    expect(used.error).toBeNull();
    expect(used.data).toMatchObject({ token: expect.any(String), user: { email: 'bob@example.com' } });
    expect((await c.client.getSession()).data?.user.email).toBe('bob@example.com');

    const d = await challenged('bob@example.com');
    expect((await d.client.twoFactor.verifyBackupCode({ code: backupCodes[0]! })).error).toMatchObject({ status: 401, code: 'INVALID_BACKUP_CODE' });
    expect((await d.client.twoFactor.verifyBackupCode({ code: 'aaaaa-bbbbb' })).error).toMatchObject({ status: 401, code: 'INVALID_BACKUP_CODE' });
    expect((await d.client.twoFactor.verifyBackupCode({ code: backupCodes[1]! })).error).toBeNull();
    const db = await tenantDb(shop.applicationId);
    const { rows } = await db.query(
      `SELECT cardinality(t.backup_codes) AS left FROM service_auth.two_factors t JOIN service_auth.users u ON u.id = t.user_id WHERE u.email = 'bob@example.com'`,
    );
    expect(rows[0].left).toBe(8);

    const renewed = await d.client.twoFactor.generateBackupCodes({ password: PASSWORD });
    expect(renewed.error).toBeNull();
    expect(renewed.data?.backupCodes).toHaveLength(10);
    const e = await challenged('bob@example.com');
    expect((await e.client.twoFactor.verifyBackupCode({ code: backupCodes[2]! })).error).toMatchObject({ status: 401, code: 'INVALID_BACKUP_CODE' });
    expect((await e.client.twoFactor.verifyBackupCode({ code: renewed.data!.backupCodes[0]! })).error).toBeNull();
  });

  it('sends a code by email (outbox), accepts it once, stores only its digest, and refuses it once expired', async () => {
    await enrolled('otto@example.com');
    const lastCode = async () => {
      const email = await h.prisma.email.findFirstOrThrow({
        where: { applicationId: shop.applicationId, toAddress: 'otto@example.com' },
        orderBy: { createdAt: 'desc' },
      });
      expect(email.kind).toBe('two_factor_otp');
      return /\b(\d{6})\b/.exec(email.textBody)![1]!;
    };
    const c = await challenged('otto@example.com');
    expect((await c.client.twoFactor.verifyOtp({ code: '123456' })).error).toMatchObject({ status: 400, code: 'OTP_HAS_EXPIRED' });
    expect((await c.client.twoFactor.sendOtp()).data).toEqual({ status: true });
    const code = await lastCode();
    const db = await tenantDb(shop.applicationId);
    const { rows } = await db.query(`SELECT identifier, value FROM service_auth.verifications WHERE identifier LIKE 'two-factor-otp:%'`);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);

    const wrong = await c.client.twoFactor.verifyOtp({ code: code === '000000' ? '000001' : '000000' });
    expect(wrong.error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    const ok = await c.client.twoFactor.verifyOtp({ code });
    expect(ok.error).toBeNull();
    expect((await c.client.getSession()).data?.user.email).toBe('otto@example.com');
    // Signed in, a code can be asked for again (Better Auth); it works once.
    await c.client.twoFactor.sendOtp();
    const fresh = await lastCode();
    expect((await c.client.twoFactor.verifyOtp({ code: fresh })).error).toBeNull();
    expect((await c.client.twoFactor.verifyOtp({ code: fresh })).error).toMatchObject({ status: 400, code: 'OTP_HAS_EXPIRED' });

    // Used: a new challenge cannot replay it.
    const d = await challenged('otto@example.com');
    expect((await d.client.twoFactor.verifyOtp({ code })).error).toMatchObject({ status: 400, code: 'OTP_HAS_EXPIRED' });
    await d.client.twoFactor.sendOtp();
    const second = await lastCode();
    await db.query(`UPDATE service_auth.verifications SET expires_at = now() - interval '1 second' WHERE identifier LIKE 'two-factor-otp%'`);
    expect((await d.client.twoFactor.verifyOtp({ code: second })).error).toMatchObject({ status: 400, code: 'OTP_HAS_EXPIRED' });
    expect((await d.client.getSession()).data).toBeNull();
  });

  it('trusts a device for 30 days when asked, bound to its user, until 2FA is disabled or the password changes', async () => {
    const { totpURI } = await enrolled('tess@example.com');
    const c = await challenged('tess@example.com');
    const verified = await c.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1), trustDevice: true });
    expect(verified.error).toBeNull();
    const trustLine = c.state.setCookies.find((l) => l.startsWith(`${TRUST_COOKIE}=`))!;
    expect(trustLine).toMatch(/; Max-Age=2592000; Path=\/a\/shop; HttpOnly; Secure; SameSite=Lax$/);

    await c.client.signOut();
    const trusted = await c.client.signIn.email({ email: 'tess@example.com', password: PASSWORD });
    expect(trusted.data).toMatchObject({ token: expect.any(String), user: { email: 'tess@example.com' } });
    expect((await c.client.getSession()).data?.user.email).toBe('tess@example.com');
    // The trust cookie is rotated on use (Better Auth): the previous value no longer works.
    const previous = trustLine.split(';')[0]!.split('=').slice(1).join('=');
    expect(c.jar.get(TRUST_COOKIE)).not.toBe(previous);
    const stale = clientFor(shop);
    stale.jar.set(TRUST_COOKIE, previous);
    expect((await stale.client.signIn.email({ email: 'tess@example.com', password: PASSWORD })).data).toMatchObject({ twoFactorRedirect: true });

    // Another user's sign-in on that device is still challenged.
    await enrolled('uma@example.com');
    const shared = clientFor(shop);
    shared.jar.set(TRUST_COOKIE, c.jar.get(TRUST_COOKIE)!);
    expect((await shared.client.signIn.email({ email: 'uma@example.com', password: PASSWORD })).data).toMatchObject({ twoFactorRedirect: true });

    // A password change ends every trusted device.
    await c.client.signOut();
    expect((await c.client.signIn.email({ email: 'tess@example.com', password: PASSWORD })).data).toMatchObject({ token: expect.any(String) });
    const changed = await c.client.changePassword({ currentPassword: PASSWORD, newPassword: 'a brand new password' });
    expect(changed.error).toBeNull();
    await c.client.signOut();
    expect((await c.client.signIn.email({ email: 'tess@example.com', password: 'a brand new password' })).data).toMatchObject({ twoFactorRedirect: true });
  });

  it('disabling two-factor (with the password) removes the row and the trusted devices', async () => {
    const { totpURI } = await enrolled('dora@example.com');
    const c = await challenged('dora@example.com');
    expect((await c.client.twoFactor.verifyTotp({ code: await codeFor(totpURI, 1), trustDevice: true })).error).toBeNull();
    const trust = c.jar.get(TRUST_COOKIE)!;
    expect((await c.client.twoFactor.disable({ password: 'wrong password!' })).error).toMatchObject({ status: 400, code: 'INVALID_PASSWORD' });
    expect((await c.client.twoFactor.disable({ password: PASSWORD })).data).toEqual({ status: true });
    expect((await c.client.getSession()).data?.user.twoFactorEnabled).toBe(false);
    const db = await tenantDb(shop.applicationId);
    const { rows } = await db.query(
      `SELECT 1 FROM service_auth.two_factors t JOIN service_auth.users u ON u.id = t.user_id WHERE u.email = 'dora@example.com'`,
    );
    expect(rows).toHaveLength(0);
    expect((await clientFor(shop).client.signIn.email({ email: 'dora@example.com', password: PASSWORD })).data).toMatchObject({ token: expect.any(String) });

    // On again: the device trusted before is challenged.
    const enabled = await c.client.twoFactor.enable({ password: PASSWORD });
    expect((await c.client.twoFactor.verifyTotp({ code: await codeFor((enabled.data as { totpURI: string }).totpURI) })).error).toBeNull();
    const d = clientFor(shop);
    d.jar.set(TRUST_COOKIE, trust);
    expect((await d.client.signIn.email({ email: 'dora@example.com', password: PASSWORD })).data).toMatchObject({ twoFactorRedirect: true });
  });

  it('limits code guesses per account: wrong codes count and lock, even the right code then waits', async () => {
    const { totpURI } = await enrolled('lock@example.com');
    const c = await challenged('lock@example.com');
    const right = await codeFor(totpURI, 1);
    const wrong = right === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) expect((await c.client.twoFactor.verifyTotp({ code: wrong })).error).toMatchObject({ status: 401, code: 'INVALID_CODE' });
    const locked = await c.client.twoFactor.verifyTotp({ code: right });
    expect(locked.error).toMatchObject({ status: 429 });
    expect((await c.client.twoFactor.verifyBackupCode({ code: 'aaaaa-bbbbb' })).error).toMatchObject({ status: 429 });
    expect((await c.client.getSession()).data).toBeNull();
    // Another account from the same address is not locked.
    const { totpURI: otherURI } = await enrolled('free@example.com');
    const f = await challenged('free@example.com');
    expect((await f.client.twoFactor.verifyTotp({ code: await codeFor(otherURI, 1) })).error).toBeNull();
  });

  it('answers 404 for every route while the application has two-factor off', async () => {
    const c = clientFor(plain, 'plain');
    await c.client.signUp.email({ email: 'off@example.com', password: PASSWORD, name: 'Off' });
    for (const path of ['enable', 'disable', 'get-totp-uri', 'verify-totp', 'send-otp', 'verify-otp', 'generate-backup-codes', 'verify-backup-code']) {
      const res = await c.client.$fetch(`/two-factor/${path}`, { method: 'POST', body: { password: PASSWORD, code: '123456' } });
      expect(res.error).toMatchObject({ status: 404 });
    }
  });
});
