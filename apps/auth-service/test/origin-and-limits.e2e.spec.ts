import { CLIENT_ADDRESS_HEADER, signClientAddress } from '@slipway/sign-in-sdk';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

const MUTATING = [
  '/sign-up/email',
  '/sign-in/email',
  '/sign-out',
  '/request-password-reset',
  '/reset-password',
  '/send-verification-email',
  '/change-password',
  '/update-user',
  '/revoke-session',
  '/revoke-sessions',
  '/revoke-other-sessions',
];

describe('origin checks, CORS and rate limits (real Redis, default limits)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let strict: { applicationId: string; authUrl: string };

  beforeAll(async () => {
    h = await startAuthHarness('authorigin', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '9', AUTH_TRUSTED_PROXIES: '127.0.0.1' });
    shop = await h.createTenant('shop');
    strict = await h.createTenant('strict', { allowLocalhost: false });
    await h.prisma.trustedOrigin.create({ data: { applicationId: strict.applicationId, origin: 'https://app.example.com', source: 'manual' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each([
    ['missing', null, 'MISSING_OR_NULL_ORIGIN'],
    ['null', 'null', 'MISSING_OR_NULL_ORIGIN'],
    ['evil', 'https://evil.com', 'INVALID_ORIGIN'],
    ['suffix trick', 'https://app.example.com.evil.com', 'INVALID_ORIGIN'],
    ['query trick', 'malicious.com?.example.com', 'INVALID_ORIGIN'],
    ['localhost while local development is off', 'http://localhost:5173', 'INVALID_ORIGIN'],
    ['another tenant’s address', originOf('shop'), 'INVALID_ORIGIN'],
  ])('refuses %s Origin on every mutating route with 403', async (_name, origin, code) => {
    let n = 0;
    for (const path of MUTATING) {
      const c = new TestClient(strict.authUrl, origin, `203.0.113.${++n}`);
      const res = await c.post(path, {
        email: 'x@example.com',
        password: 'whatever123',
        name: 'x',
        token: 't',
        newPassword: 'whatever123',
        currentPassword: 'whatever123',
      });
      expect([path, res.status]).toEqual([path, 403]);
      expect(await res.json()).toEqual({ code, message: expect.any(String) });
    }
  });

  it('accepts a trusted origin, and localhost while the application allows local development', async () => {
    const trusted = new TestClient(strict.authUrl, 'https://app.example.com', '198.51.100.1');
    expect((await trusted.signUp('ok@example.com')).status).toBe(200);
    const local = new TestClient(shop.authUrl, 'http://localhost:5173', '198.51.100.2');
    expect((await local.signUp('ok@example.com')).status).toBe(200);
  });

  it('refuses redirect targets outside the tenant', async () => {
    const c = new TestClient(strict.authUrl, 'https://app.example.com', '198.51.100.3');
    const res = await c.post('/sign-in/email', { email: 'ok@example.com', password: 'correct horse battery', callbackURL: 'https://evil.com/steal' });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('INVALID_CALLBACK_URL');
    const rel = await c.post('/sign-in/email', { email: 'ok@example.com', password: 'correct horse battery', callbackURL: '/dashboard' });
    expect(rel.status).toBe(200);
    expect(await rel.json()).toMatchObject({ redirect: true, url: '/dashboard' });
  });

  it('answers CORS preflight for trusted origins with credentials and exposes set-auth-jwt', async () => {
    const pre = await fetch(`${strict.authUrl}/get-session`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
    expect(pre.headers.get('access-control-expose-headers')).toContain('set-auth-jwt');
    const evil = await fetch(`${strict.authUrl}/get-session`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.com', 'access-control-request-method': 'GET' },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives the 10th sign-in within 10 s from one address 429 with x-retry-after, and spoofed XFF from an untrusted peer does not help', async () => {
    // The test process is the trusted proxy 127.0.0.1; the client is the XFF address.
    const c = new TestClient(shop.authUrl, originOf('shop'), '192.0.2.10');
    for (let i = 0; i < 9; i++) expect((await c.signIn('nobody@example.com', 'wrong password')).status).toBe(401);
    const limited = await c.signIn('nobody@example.com', 'wrong password');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('x-retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('x-retry-after'))).toBeLessThanOrEqual(10);
    expect(limited.headers.get('retry-after')).toBe(limited.headers.get('x-retry-after'));
    expect(await limited.json()).toEqual({ message: 'Too many requests. Please try again later.' });
    // Sign-up shares the allowance.
    expect((await c.signUp('new@example.com')).status).toBe(429);
    // Another address is unaffected; session reads have their own, looser bucket.
    expect((await new TestClient(shop.authUrl, originOf('shop'), '192.0.2.11').signIn('nobody@example.com', 'wrong password')).status).toBe(401);
    expect((await c.get('/get-session')).status).toBe(200);
    // Spoofing: an address left of the client's own entry is not believed.
    const spoof = new TestClient(shop.authUrl, originOf('shop'), '10.9.9.9, 192.0.2.10');
    expect((await spoof.signIn('nobody@example.com', 'wrong password')).status).toBe(429);
  });
});

describe('client address without trusted proxies', () => {
  let h: AuthHarness;
  let shop: { authUrl: string };
  beforeAll(async () => {
    h = await startAuthHarness('authxff', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '9' });
    shop = await h.createTenant('shop');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('ignores rotating X-Forwarded-For from an untrusted peer', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const c = new TestClient(shop.authUrl, originOf('shop'), `198.18.0.${i}`);
      statuses.push((await c.signIn('nobody@example.com', 'wrong password')).status);
    }
    expect(statuses).toEqual([...Array(9).fill(401), 429]);
  });
});

describe('visitor address vouched for by the application server (@slipway/sign-in-sdk)', () => {
  let h: AuthHarness;
  let secrets: Record<string, string>;
  const keyring = () => keyringFromMasterKey(h.config.SLIPWAY_MASTER_KEY);
  beforeAll(async () => {
    h = await startAuthHarness('authvouch', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '9' });
    secrets = {};
    for (const slug of ['vouch', 'other']) {
      const tenant = await h.createTenant(slug);
      const row = await h.prisma.signInService.findUniqueOrThrow({ where: { applicationId: tenant.applicationId } });
      secrets[slug] = decryptEnvelopeToString(keyring(), row.cookieSecret, envelopeBinding.cookieSecret(tenant.applicationId));
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it('counts each signed address on its own; another tenant’s signature or a stale one is ignored', async () => {
    const sign = (slug: string, address: string, at = Date.now()) => signClientAddress(secrets[slug]!, address, at);
    const send = (slug: string, header: string) =>
      new TestClient(h.authUrl(slug), originOf(slug)).post(
        '/sign-in/email',
        { email: 'nobody@example.com', password: 'wrong password' },
        { [CLIENT_ADDRESS_HEADER]: header },
      );
    // Ten visitors behind one server, each with its own signed address: nobody is limited.
    const vouched: number[] = [];
    for (let i = 0; i < 10; i++) vouched.push((await send('vouch', sign('vouch', `203.0.113.${i}`))).status);
    expect(vouched).toEqual(Array(10).fill(401));
    // Signed with the other application's secret, or two minutes old: the peer's address counts.
    const forged: number[] = [];
    for (let i = 0; i < 5; i++) forged.push((await send('vouch', sign('other', `198.51.100.${i}`))).status);
    for (let i = 0; i < 5; i++) forged.push((await send('vouch', sign('vouch', `198.51.100.${i + 5}`, Date.now() - 120_000))).status);
    expect(forged).toEqual([...Array(9).fill(401), 429]);
  });
});
