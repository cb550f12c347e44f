import { fileURLToPath } from 'node:url';
import { encryptEnvelope, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { freePort, startProcess, type RunningProcess } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('social sign-in against a real local OAuth2 server (oauth2-mock-server)', () => {
  let h: AuthHarness;
  let oauth: RunningProcess;
  let shop: { applicationId: string; authUrl: string };
  let userinfo: Record<string, unknown> = {};

  beforeAll(async () => {
    const port = await freePort();
    oauth = startProcess(process.execPath, [fileURLToPath(new URL('./fixtures/oauth2-server.mjs', import.meta.url)), String(port)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    await oauth.waitForOutput(/listening/);
    const issuer = `http://127.0.0.1:${port}`;
    const endpoints = { authorize: `${issuer}/authorize`, token: `${issuer}/token`, userInfo: `${issuer}/userinfo` };
    h = await startAuthHarness('authsocial', { AUTH_OAUTH_PROVIDER_URLS: JSON.stringify({ github: endpoints, google: endpoints }) });
    shop = await h.createTenant('shop');
    const keyring = keyringFromMasterKey(h.config.SLIPWAY_MASTER_KEY);
    const secret = (provider: string) =>
      Buffer.from(encryptEnvelope(keyring, `owner-secret-${provider}`, envelopeBinding.oauthClientSecret(shop.applicationId, provider))).toString('base64');
    await h.prisma.signInService.update({
      where: { applicationId: shop.applicationId },
      data: {
        settings: {
          socialProviders: {
            github: { clientId: 'gh-client', clientSecret: secret('github') },
            google: { clientId: 'google-client', clientSecret: secret('google') },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await oauth?.stop();
  });

  /** Runs the browser's part: start, follow the provider's redirect, come back to the callback. */
  async function socialSignIn(c: TestClient, provider: string, extra: Record<string, string> = {}) {
    const start = await c.post('/sign-in/social', { provider, callbackURL: `${originOf('shop')}/home`, ...extra });
    expect(start.status).toBe(200);
    const { url, redirect } = await start.json();
    expect(redirect).toBe(true);
    const authorize = new URL(url);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${shop.authUrl}/callback/${provider}`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const toCallback = await fetch(`${url}&test_user=${Buffer.from(JSON.stringify(userinfo)).toString('base64url')}`, { redirect: 'manual' });
    expect(toCallback.status).toBe(302);
    const callback = new URL(toCallback.headers.get('location')!);
    return c.get(`${callback.pathname.replace(`/a/shop`, '')}${callback.search}`);
  }

  it('creates a user from Google with a verified email (the server checks the owner’s client secret and PKCE)', async () => {
    userinfo = { sub: 'google-123', email: 'Olga@Example.com', email_verified: true, name: 'Olga', picture: 'https://img.example/o.png' };
    const c = new TestClient(shop.authUrl, originOf('shop'));
    const done = await socialSignIn(c, 'google');
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`${originOf('shop')}/home`);
    const session = await (await c.get('/get-session')).json();
    expect(session.user).toMatchObject({ email: 'olga@example.com', name: 'Olga', emailVerified: true, image: 'https://img.example/o.png' });

    // Signing in again finds the same user through the linked account.
    const again = new TestClient(shop.authUrl, originOf('shop'));
    await socialSignIn(again, 'google');
    expect((await (await again.get('/get-session')).json()).user.id).toBe(session.user.id);
  });

  it('links a verified provider email to an existing password account, but never an unverified one', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    const { user } = await (await c.signUp('pat@example.com')).json();
    userinfo = { id: 777, login: 'pat', name: 'Pat', email: 'pat@example.com' };
    const viaGithub = new TestClient(shop.authUrl, originOf('shop'));
    const refused = await socialSignIn(viaGithub, 'github');
    expect(refused.headers.get('location')).toBe(`${originOf('shop')}/home?error=account_not_linked`);
    expect(await (await viaGithub.get('/get-session')).json()).toBeNull();

    userinfo = { sub: 'google-pat', email: 'pat@example.com', email_verified: true, name: 'Pat' };
    const viaGoogle = new TestClient(shop.authUrl, originOf('shop'));
    await socialSignIn(viaGoogle, 'google');
    expect((await (await viaGoogle.get('/get-session')).json()).user.id).toBe(user.id);
  });

  it('creates a GitHub user (email unverified without the emails endpoint) and sends new users to newUserCallbackURL', async () => {
    userinfo = { id: 4242, login: 'quinn', name: null, email: 'quinn@example.com', avatar_url: 'https://img.example/q.png' };
    const c = new TestClient(shop.authUrl, originOf('shop'));
    const done = await socialSignIn(c, 'github', { newUserCallbackURL: `${originOf('shop')}/welcome` });
    expect(done.headers.get('location')).toBe(`${originOf('shop')}/welcome`);
    expect((await (await c.get('/get-session')).json()).user).toMatchObject({ email: 'quinn@example.com', name: 'quinn', emailVerified: false });
  });

  it('fails with oauth_provider_error when the provider refuses the client secret', async () => {
    const other = await h.createTenant('other');
    const keyring = keyringFromMasterKey(h.config.SLIPWAY_MASTER_KEY);
    const wrong = Buffer.from(encryptEnvelope(keyring, 'not-the-secret', envelopeBinding.oauthClientSecret(other.applicationId, 'google'))).toString('base64');
    await h.prisma.signInService.update({
      where: { applicationId: other.applicationId },
      data: { settings: { socialProviders: { google: { clientId: 'g', clientSecret: wrong } } } },
    });
    userinfo = { sub: 'google-y', email: 'y@example.com', email_verified: true, name: 'Y' };
    const c = new TestClient(other.authUrl, originOf('other'));
    const { url } = await (await c.post('/sign-in/social', { provider: 'google', callbackURL: '/home' })).json();
    const callback = new URL(
      (await fetch(`${url}&test_user=${Buffer.from(JSON.stringify(userinfo)).toString('base64url')}`, { redirect: 'manual' })).headers.get('location')!,
    );
    const res = await c.get(`${callback.pathname.replace('/a/other', '')}${callback.search}`);
    expect(res.headers.get('location')).toBe('/home?error=oauth_provider_error');
    expect(await (await c.get('/get-session')).json()).toBeNull();
  });

  it('refuses a callback in a browser that did not start the sign-in, unknown providers, and foreign callback URLs', async () => {
    userinfo = { sub: 'google-x', email: 'x@example.com', email_verified: true, name: 'X' };
    const starter = new TestClient(shop.authUrl, originOf('shop'));
    const { url } = await (await starter.post('/sign-in/social', { provider: 'google', callbackURL: '/home' })).json();
    const callback = new URL(
      (await fetch(`${url}&test_user=${Buffer.from(JSON.stringify(userinfo)).toString('base64url')}`, { redirect: 'manual' })).headers.get('location')!,
    );
    const other = new TestClient(shop.authUrl, originOf('shop'));
    const res = await other.get(`/callback/google${callback.search}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toContain('error=state_mismatch');
    expect(await (await other.get('/get-session')).json()).toBeNull();

    const unknown = await starter.post('/sign-in/social', { provider: 'facebook' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe('PROVIDER_NOT_FOUND');
    const foreign = await starter.post('/sign-in/social', { provider: 'google', callbackURL: 'https://evil.com/' });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).code).toBe('INVALID_CALLBACK_URL');
  });

  it('refuses a callback carrying two state cookies, whichever comes first (a tossed one among them)', async () => {
    userinfo = { sub: 'google-toss', email: 'toss@example.com', email_verified: true, name: 'Toss' };
    const STATE = '__Secure-slipway.oauth_state';
    const begin = async () => {
      const c = new TestClient(shop.authUrl, originOf('shop'));
      const { url } = await (await c.post('/sign-in/social', { provider: 'google', callbackURL: '/home' })).json();
      const callback = new URL(
        (await fetch(`${url}&test_user=${Buffer.from(JSON.stringify(userinfo)).toString('base64url')}`, { redirect: 'manual' })).headers.get('location')!,
      );
      return { search: callback.search, cookie: `${STATE}=${c.cookies.get(STATE)!}` };
    };
    const mine = await begin();
    const tossed = await begin();
    for (const cookie of [`${tossed.cookie}; ${mine.cookie}`, `${mine.cookie}; ${tossed.cookie}`]) {
      const res = await fetch(`${shop.authUrl}/callback/google${mine.search}`, { headers: { cookie }, redirect: 'manual' });
      expect([cookie, res.status, res.headers.get('location')]).toEqual([cookie, 302, `${shop.authUrl}/error?error=state_mismatch`]);
      expect(res.headers.getSetCookie().some((c) => c.startsWith('__Secure-slipway.session_token=') && !/Max-Age=0/.test(c))).toBe(false);
    }
    // Alone, the same cookie completes the sign-in (the state was not used up above).
    const ok = await fetch(`${shop.authUrl}/callback/google${mine.search}`, { headers: { cookie: mine.cookie }, redirect: 'manual' });
    expect(ok.headers.get('location')).toBe('/home');
  });
});
