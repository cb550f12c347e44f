import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createAuthClient } from 'better-auth/client';
import { encryptEnvelope, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { freePort, startProcess, TEST_SERVER_URL, type RunningProcess } from '@slipway/testing';
import { browserLikeFetch, startAuthHarness, originOf, type AuthHarness } from './harness.js';

type Tenant = { applicationId: string; slug: string; authUrl: string };

/** Node has no cookie jar: a fetch that keeps cookies and sends the page's Origin, as a browser would. */
function browser(origin: string) {
  const { impl, jar } = browserLikeFetch(origin, { redirect: 'manual' });
  const client = createAuthClient({ baseURL: '', fetchOptions: { customFetchImpl: impl } });
  return { impl, jar, client };
}

async function providers(h: AuthHarness, tenant: Tenant, list: Record<string, { issuer: string; clientId?: string; secret?: string }>) {
  const keyring = keyringFromMasterKey(h.config.SLIPWAY_MASTER_KEY);
  const oidcProviders = Object.fromEntries(
    Object.entries(list).map(([id, p]) => [
      id,
      {
        issuer: p.issuer,
        clientId: p.clientId ?? `${id}-client`,
        clientSecret: Buffer.from(
          encryptEnvelope(keyring, p.secret ?? `owner-secret-${id}`, envelopeBinding.oauthClientSecret(tenant.applicationId, id)),
        ).toString('base64'),
      },
    ]),
  );
  await h.prisma.signInService.update({ where: { applicationId: tenant.applicationId }, data: { settings: { oidcProviders } } });
}

async function tenantRows(h: AuthHarness, tenant: Tenant, sql: string, params: unknown[] = []) {
  const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: tenant.applicationId } });
  const client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The provider's part in a browser: follow the authorize URL as `user`, return the callback URL it sends back to. */
async function atProvider(url: string, user: object): Promise<URL> {
  const res = await fetch(`${url}&test_user=${Buffer.from(JSON.stringify(user)).toString('base64url')}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

describe('generic OpenID Connect providers against a real OIDC server in its own process (oauth2-mock-server)', () => {
  let h: AuthHarness;
  let idp: RunningProcess;
  let issuer: string;
  let shop: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    const port = await freePort();
    idp = startProcess(process.execPath, [fileURLToPath(new URL('./fixtures/oidc-server.mjs', import.meta.url)), String(port)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    await idp.waitForOutput(/listening/);
    issuer = `http://127.0.0.1:${port}`;
    // The local OIDC server is http on 127.0.0.1: allowed here only (the SSRF tests below run without it).
    h = await startAuthHarness('authoidc', { AUTH_OIDC_ALLOW_PRIVATE_ISSUERS: 'true' });
    shop = await h.createTenant('shop');
    other = await h.createTenant('other');
    await providers(h, shop, { acme: { issuer } });
    await providers(h, other, { acme: { issuer } });
  });
  afterAll(async () => {
    await h?.close();
    await idp?.stop();
  });

  /** Better Auth 1.7's client: `signIn.social({provider})` for a genericOAuth provider, then the provider, then the callback. */
  async function signIn(tenant: Tenant, user: object, extra: Record<string, unknown> = {}) {
    const b = browser(originOf(tenant.slug));
    const client = createAuthClient({ baseURL: tenant.authUrl, fetchOptions: { customFetchImpl: b.impl } });
    const start = await client.signIn.social({ provider: 'acme', callbackURL: `${originOf(tenant.slug)}/home`, disableRedirect: true, ...extra });
    expect(start.error).toBeNull();
    const authorize = new URL(start.data!.url!);
    const callback = await atProvider(start.data!.url!, user);
    const done = await b.impl(callback.toString());
    return { b, client, authorize, callback, done };
  }

  it('signs a new user in (PKCE S256, state, nonce, a verified id_token) and signs the same user in again', async () => {
    const { client, authorize, callback, done } = await signIn(
      shop,
      { claims: { sub: 'acme-olga', email: 'Olga@Example.com', email_verified: true, name: 'Olga' } },
      { newUserCallbackURL: `${originOf('shop')}/welcome` },
    );
    expect(authorize.origin).toBe(issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'acme-client',
      redirect_uri: `${shop.authUrl}/callback/acme`,
      code_challenge_method: 'S256',
      nonce: expect.stringMatching(/^\w{32}$/),
    });
    expect(authorize.searchParams.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    expect(callback.toString()).toMatch(new RegExp(`^${shop.authUrl}/callback/acme\\?`));
    expect([done.status, done.headers.get('location')]).toEqual([302, `${originOf('shop')}/welcome`]);
    const session = await client.getSession();
    expect(session.data?.user).toMatchObject({ email: 'olga@example.com', name: 'Olga', emailVerified: true });
    expect(
      await tenantRows(
        h,
        shop,
        `SELECT a.provider_id, a.account_id, u.email, u.email_verified FROM service_auth.accounts a JOIN service_auth.users u ON u.id = a.user_id WHERE u.email = 'olga@example.com'`,
      ),
    ).toEqual([{ provider_id: 'acme', account_id: 'acme-olga', email: 'olga@example.com', email_verified: true }]);
    // The state is used up; the verifications row is gone.
    expect(
      await tenantRows(h, shop, `SELECT count(*)::int AS n FROM service_auth.verifications WHERE identifier LIKE 'oauth-state%' AND identifier LIKE $1`, [
        `%${authorize.searchParams.get('state')}%`,
      ]),
    ).toEqual([{ n: 0 }]);

    const again = await signIn(shop, { claims: { sub: 'acme-olga', email: 'olga@example.com', email_verified: true, name: 'Olga' } });
    expect(again.done.headers.get('location')).toBe(`${originOf('shop')}/home`);
    expect((await again.client.getSession()).data?.user.id).toBe(session.data!.user.id);
  });

  it('links to an existing account only when the provider says the email is verified', async () => {
    const owner = browser(originOf('shop'));
    const signUp = createAuthClient({ baseURL: shop.authUrl, fetchOptions: { customFetchImpl: owner.impl } });
    const { data } = await signUp.signUp.email({ email: 'pat@example.com', password: 'correct horse battery', name: 'Pat' });

    const unverified = await signIn(shop, { claims: { sub: 'acme-pat-1', email: 'pat@example.com', email_verified: false, name: 'Mallory' } });
    expect(unverified.done.headers.get('location')).toBe(`${originOf('shop')}/home?error=account_not_linked`);
    expect((await unverified.client.getSession()).data).toBeNull();
    // An id_token without email falls back to userinfo (same sub); unverified there too: not linked.
    const viaUserinfo = await signIn(shop, {
      claims: { sub: 'acme-pat-2' },
      userinfo: { sub: 'acme-pat-2', email: 'pat@example.com', email_verified: 'false' },
    });
    expect(viaUserinfo.done.headers.get('location')).toBe(`${originOf('shop')}/home?error=account_not_linked`);
    expect(await tenantRows(h, shop, `SELECT provider_id FROM service_auth.accounts WHERE user_id = $1`, [data!.user.id])).toEqual([
      { provider_id: 'credential' },
    ]);

    const verified = await signIn(shop, { claims: { sub: 'acme-pat', email: 'PAT@example.com', email_verified: true, name: 'Pat' } });
    expect(verified.done.headers.get('location')).toBe(`${originOf('shop')}/home`);
    expect((await verified.client.getSession()).data?.user.id).toBe(data!.user.id);
    expect(
      await tenantRows(h, shop, `SELECT provider_id, account_id FROM service_auth.accounts WHERE user_id = $1 ORDER BY provider_id`, [data!.user.id]),
    ).toEqual([
      { provider_id: 'acme', account_id: 'acme-pat' },
      { provider_id: 'credential', account_id: expect.any(String) },
    ]);
  });

  it('refuses an id_token for another client (aud), with another nonce, or from another issuer; no session, no user', async () => {
    for (const tamper of [{ aud: 'someone-else' }, { nonce: 'not-the-nonce' }, { iss: 'https://evil.example' }]) {
      const email = `tamper-${Object.keys(tamper)[0]}@example.com`;
      const { client, done } = await signIn(shop, { claims: { sub: `acme-${email}`, email, email_verified: true, name: 'T' }, tamper });
      expect([tamper, done.headers.get('location')]).toEqual([tamper, `${originOf('shop')}/home?error=oauth_provider_error`]);
      expect((await client.getSession()).data).toBeNull();
      expect(await tenantRows(h, shop, 'SELECT id FROM service_auth.users WHERE email = $1', [email])).toEqual([]);
    }
  });

  it('refuses a callback carrying another tenant’s state (its cookie too), and another browser’s', async () => {
    const b = browser(originOf('shop'));
    const client = createAuthClient({ baseURL: shop.authUrl, fetchOptions: { customFetchImpl: b.impl } });
    const start = await client.signIn.social({ provider: 'acme', callbackURL: '/home', disableRedirect: true });
    const callback = await atProvider(start.data!.url!, { claims: { sub: 'acme-cross', email: 'cross@example.com', email_verified: true } });
    // The other tenant, same provider id and issuer, given shop's state and shop's state cookie.
    const thief = browser(originOf('other'));
    for (const [k, v] of b.jar) thief.jar.set(k, v);
    const res = await thief.impl(`${other.authUrl}/callback/acme${callback.search}`);
    expect([res.status, res.headers.get('location')]).toEqual([302, `${other.authUrl}/error?error=state_mismatch`]);
    const stranger = browser(originOf('shop'));
    const res2 = await stranger.impl(`${shop.authUrl}/callback/acme${callback.search}`);
    expect(res2.headers.get('location')).toBe(`${shop.authUrl}/error?error=state_mismatch`);
    expect(await tenantRows(h, other, `SELECT id FROM service_auth.users WHERE email = 'cross@example.com'`)).toEqual([]);
    // Shop's own browser still completes it.
    expect((await b.impl(callback.toString())).headers.get('location')).toBe('/home');
  });

  it('answers PROVIDER_NOT_FOUND for an unknown provider and for a tenant without OIDC providers', async () => {
    const b = browser(originOf('shop'));
    const client = createAuthClient({ baseURL: shop.authUrl, fetchOptions: { customFetchImpl: b.impl } });
    expect((await client.signIn.social({ provider: 'nope' as 'github', disableRedirect: true })).error).toMatchObject({
      status: 404,
      code: 'PROVIDER_NOT_FOUND',
    });
    expect((await client.$fetch('/sign-in/oauth2', { method: 'POST', body: { providerId: 'nope' } })).error).toMatchObject({
      status: 404,
      code: 'PROVIDER_NOT_FOUND',
    });
    // The built-in ids are not genericOAuth's, even when configured as social providers.
    expect((await client.$fetch('/sign-in/oauth2', { method: 'POST', body: { providerId: 'github' } })).error).toMatchObject({
      status: 404,
      code: 'PROVIDER_NOT_FOUND',
    });
    const bare = await h.createTenant('bare');
    const c2 = browser(originOf('bare'));
    const bareClient = createAuthClient({ baseURL: bare.authUrl, fetchOptions: { customFetchImpl: c2.impl } });
    expect((await bareClient.signIn.social({ provider: 'acme' as 'github', disableRedirect: true })).error).toMatchObject({
      status: 404,
      code: 'PROVIDER_NOT_FOUND',
    });
    expect((await bareClient.$fetch('/sign-in/oauth2', { method: 'POST', body: { providerId: 'acme' } })).error).toMatchObject({
      status: 404,
      code: 'PROVIDER_NOT_FOUND',
    });
  });

  it('serves genericOAuthClient’s older routes: /sign-in/oauth2, /oauth2/callback/:providerId, /oauth2/link', async () => {
    const b = browser(originOf('shop'));
    const client = createAuthClient({ baseURL: shop.authUrl, fetchOptions: { customFetchImpl: b.impl } });
    const start = await client.$fetch<{ url: string; redirect: boolean }>('/sign-in/oauth2', {
      method: 'POST',
      body: { providerId: 'acme', callbackURL: '/dash', scopes: ['offline_access'] },
    });
    expect(start.data).toMatchObject({ redirect: true, url: expect.stringContaining(`${issuer}/authorize?`) });
    expect(new URL(start.data!.url).searchParams.get('scope')!.split(' ')).toContain('offline_access');
    const callback = await atProvider(start.data!.url, { claims: { sub: 'acme-lee', email: 'lee@example.com', email_verified: true, name: 'Lee' } });
    const done = await b.impl(`${shop.authUrl}/oauth2/callback/acme${callback.search}`);
    expect(done.headers.get('location')).toBe('/dash');
    const me = (await client.getSession()).data!.user;

    // Linking: a second provider of the same tenant, the same person there.
    await providers(h, shop, { acme: { issuer }, corp: { issuer } });
    const noSession = browser(originOf('shop'));
    expect(
      (
        await createAuthClient({ baseURL: shop.authUrl, fetchOptions: { customFetchImpl: noSession.impl } }).$fetch('/oauth2/link', {
          method: 'POST',
          body: { providerId: 'corp', callbackURL: '/linked' },
        })
      ).error,
    ).toMatchObject({ status: 401 });
    const link = await client.$fetch<{ url: string; redirect: boolean }>('/oauth2/link', {
      method: 'POST',
      body: { providerId: 'corp', callbackURL: '/linked' },
    });
    const linkBack = await atProvider(link.data!.url, { claims: { sub: 'corp-lee', email: 'lee@example.com', email_verified: true } });
    expect((await b.impl(linkBack.toString())).headers.get('location')).toBe('/linked');
    expect(await tenantRows(h, shop, 'SELECT provider_id, account_id FROM service_auth.accounts WHERE user_id = $1 ORDER BY provider_id', [me.id])).toEqual([
      { provider_id: 'acme', account_id: 'acme-lee' },
      { provider_id: 'corp', account_id: 'corp-lee' },
    ]);
    // Another person's account at the provider is not linked to this user.
    const wrong = await client.$fetch<{ url: string }>('/oauth2/link', { method: 'POST', body: { providerId: 'corp', callbackURL: '/linked' } });
    const wrongBack = await atProvider(wrong.data!.url, { claims: { sub: 'corp-kim', email: 'kim@example.com', email_verified: true } });
    expect((await b.impl(wrongBack.toString())).headers.get('location')).toBe("/linked?error=email_doesn't_match");
    await providers(h, shop, { acme: { issuer } });
  });
});

describe('generic OIDC: a tenant’s issuer may not reach the platform’s network (AUTH_OIDC_ALLOW_PRIVATE_ISSUERS off)', () => {
  let h: AuthHarness;
  let tcp: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    // A listener that counts connections: nothing the service does may reach it.
    tcp = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    port = (tcp.address() as { port: number }).port;
    h = await startAuthHarness('authoidcssrf');
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  });

  it('refuses issuers on loopback, private, link-local addresses and a name resolving to loopback, without connecting', async () => {
    const issuers = [
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}`,
      `https://${hostname()}:${port}`,
      `https://localhost:${port}`,
      'https://10.0.0.7',
      'https://169.254.169.254/latest/meta-data',
      'https://[::ffff:127.0.0.1]:' + port,
    ];
    for (const [i, issuer] of issuers.entries()) {
      const tenant = await h.createTenant(`ssrf${i}`);
      await providers(h, tenant, { acme: { issuer } });
      const b = browser(originOf(tenant.slug));
      const client = createAuthClient({ baseURL: tenant.authUrl, fetchOptions: { customFetchImpl: b.impl } });
      const res = await client.signIn.social({ provider: 'acme' as 'github', disableRedirect: true });
      expect([issuer, res.error]).toEqual([issuer, expect.objectContaining({ status: 400, code: 'INVALID_OAUTH_CONFIGURATION' })]);
    }
    expect(connections).toBe(0);
  });
});
