import { rawRequest } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

/**
 * Issue 20, item 1: after `/sign-in/email` answered 429, other spellings of the same path must not
 * reach the handler (nor count against another bucket). Every variant is sent byte for byte.
 */
const SIGN_IN_SPELLINGS = [
  '/SIGN-IN/EMAIL',
  '/Sign-In/Email',
  '/sign-in/EMAIL',
  '/sign-in/email/',
  '/sign-in/email//',
  '//sign-in/email',
  '/sign-in//email',
  '/sign-in/%65mail',
  '/sign-in/%65%6d%61%69%6c',
  '/%73ign-in/email',
  '/sign-in%2femail',
  '/sign-in%2Femail',
  '/sign-in/email;x=1',
  '/sign-in;x=1/email',
  '/sign-in/email;',
  '/./sign-in/email',
  '/sign-in/./email',
  '/sign-in/email/.',
  '/x/../sign-in/email',
  '/sign-in/x/../email',
  '/%2e/sign-in/email',
  '/x/%2e%2e/sign-in/email',
  '/sign-in\\email',
  '/sign-in/email%20',
  '/sign-in/email%00',
  '/sign-in/email.',
];
/** The same class for the other sign-in-bucket routes and a session read. */
const OTHER_SPELLINGS = [
  '/SIGN-UP/EMAIL',
  '/sign-up/email/',
  '/Request-Password-Reset',
  '/change-password/',
  '/%72eset-password',
  '/GET-SESSION',
  '/get-session/',
  '/get-session;x',
  '/./token',
];

describe('every spelling of a path counts against its handler’s limit or never reaches it (real HTTP, real Redis)', () => {
  let h: AuthHarness;
  let shop: { authUrl: string };
  const email = 'paths@example.com';
  const password = 'correct horse battery';
  const signInBody = JSON.stringify({ email, password });

  const send = (target: string, address: string, body = signInBody) =>
    rawRequest(h.url, 'POST', target, { origin: originOf('shop'), 'content-type': 'application/json', 'x-forwarded-for': address }, body);

  beforeAll(async () => {
    h = await startAuthHarness('authpaths', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '5', AUTH_TRUSTED_PROXIES: '127.0.0.1' });
    shop = await h.createTenant('shop');
    expect((await new TestClient(shop.authUrl, originOf('shop'), '198.51.100.200').signUp(email, password)).status).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('after the limit, no spelling of /sign-in/email signs in; each is 429 or a 404 in the service’s shape', async () => {
    const address = '192.0.2.50';
    for (let i = 0; i < 5; i++) expect((await send('/a/shop/sign-in/email', address, JSON.stringify({ email, password: 'wrong password' }))).status).toBe(401);
    expect((await send('/a/shop/sign-in/email', address)).status).toBe(429);
    // A query string is the same path: still counted, still refused.
    expect((await send('/a/shop/sign-in/email?x=1', address)).status).toBe(429);

    const outcomes: string[] = [];
    for (const spelling of SIGN_IN_SPELLINGS) {
      const res = await send(`/a/shop${spelling}`, address);
      outcomes.push(`${spelling} ${res.status}`);
      if (res.status === 404) expect([spelling, JSON.parse(res.body)]).toEqual([spelling, { code: 'NOT_FOUND', message: expect.any(String) }]);
    }
    // 429: counted against the sign-in allowance (case aside, a spelling of a sign-in path is one);
    // 404: refused before any handler. Never 200 (signed in) nor 401 (the password was checked).
    expect(outcomes.filter((o) => !/ (404|429)$/.test(o))).toEqual([]);
  });

  it('before any limit, non-canonical spellings never reach a handler (the right password does not sign in)', async () => {
    let n = 0;
    for (const spelling of [...SIGN_IN_SPELLINGS, ...OTHER_SPELLINGS]) {
      // A fresh address each time: no limit applies, so only the routing can refuse.
      const res = await send(`/a/shop${spelling}`, `203.0.113.${++n}`);
      expect([spelling, res.status, res.setCookies]).toEqual([spelling, 404, []]);
      expect(JSON.parse(res.body)).toEqual({ code: 'NOT_FOUND', message: expect.any(String) });
    }
    for (const get of OTHER_SPELLINGS.filter((s) => /session|token/i.test(s))) {
      expect([get, (await rawRequest(h.url, 'GET', `/a/shop${get}`)).status]).toEqual([get, 404]);
    }
    // Route parameters too: the router would decode `%68` into the token and call the handler.
    for (const get of [
      '/reset-password/AbCdEfGh12345678AbCdEfG%68?callbackURL=%2Freset',
      '/callback/git%68ub?code=x&state=y',
      '/reset-password/AbCdEfGh12345678AbCdEfGh;x?callbackURL=%2Freset',
    ]) {
      const res = await rawRequest(h.url, 'GET', `/a/shop${get}`);
      expect([get, res.status, JSON.parse(res.body)]).toEqual([get, 404, { code: 'NOT_FOUND', message: expect.any(String) }]);
    }
  });

  it('the tenant segment has one spelling too', async () => {
    for (const target of [
      '/a/SHOP/sign-in/email',
      '/a/Shop/sign-in/email',
      '/a/sh%6fp/sign-in/email',
      '/a/shop%2fsign-in/email',
      '/a//shop/sign-in/email',
      '/a/./shop/sign-in/email',
      '/A/shop/sign-in/email',
      '/a/x/../shop/sign-in/email',
    ]) {
      const res = await send(target, '203.0.113.200');
      expect([target, res.status, res.setCookies]).toEqual([target, 404, []]);
    }
  });

  it('canonical paths still work: sign-in, a query string, JWKS under .well-known, the reset link with its mixed-case token', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'), '203.0.113.250');
    expect((await c.signIn(email, password)).status).toBe(200);
    expect((await c.get('/get-session?fresh=1')).status).toBe(200);
    expect((await rawRequest(h.url, 'GET', '/a/shop/.well-known/jwks.json')).status).toBe(200);
    expect((await rawRequest(h.url, 'GET', '/a/shop/reset-password/AbCdEfGh12345678AbCdEfGh?callbackURL=%2Freset')).status).toBe(302);
  });
});
