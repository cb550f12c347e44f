import pg from 'pg';
import { passkeyClient } from '@better-auth/passkey/client';
import { createAuthClient } from 'better-auth/client';
import { TEST_SERVER_URL } from '@slipway/testing';
import { SoftAuthenticator } from './passkey-authenticator.js';
import { browserLikeFetch, originOf, startAuthHarness, TestClient, type AuthHarness } from './harness.js';

type Tenant = { applicationId: string; slug: string; authUrl: string };

function passkeyAuthClient(tenant: Tenant) {
  const browser = browserLikeFetch(originOf(tenant.slug));
  return {
    client: createAuthClient({ baseURL: tenant.authUrl, plugins: [passkeyClient()], fetchOptions: { customFetchImpl: browser.impl } }),
    jar: browser.jar,
  };
}

const PASSKEY_ON = { plugins: { passkey: { enabled: true } } };

describe('passkeys (Better Auth’s passkey plugin; SimpleWebAuthn verifies)', () => {
  let h: AuthHarness;
  let shop: Tenant;
  let mall: Tenant;
  let plain: Tenant;
  const dbs = new Map<string, pg.Client>();
  const tenantQuery = async (tenant: Tenant, sql: string, params: unknown[] = []) => {
    let client = dbs.get(tenant.slug);
    if (!client) {
      const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: tenant.applicationId } });
      client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
      await client.connect();
      dbs.set(tenant.slug, client);
    }
    return (await client.query(sql, params)).rows;
  };

  /** A signed-up user of `tenant` (TestClient: cookies in hand) with a passkey on `authenticator`. */
  async function userWithPasskey(tenant: Tenant, email: string, authenticator = new SoftAuthenticator(originOf(tenant.slug))) {
    const user = new TestClient(tenant.authUrl, originOf(tenant.slug));
    expect((await user.signUp(email)).status).toBe(200);
    const options = await (await user.get('/passkey/generate-register-options')).json();
    const verified = await user.post('/passkey/verify-registration', { response: authenticator.register(options), name: 'laptop' });
    expect(verified.status).toBe(200);
    return { user, authenticator, passkey: await verified.json() };
  }

  beforeAll(async () => {
    h = await startAuthHarness('authpasskey');
    shop = await h.createTenant('shop', { settings: PASSKEY_ON });
    mall = await h.createTenant('mall', { settings: PASSKEY_ON });
    plain = await h.createTenant('plain');
  }, 120_000);
  afterAll(async () => {
    for (const client of dbs.values()) await client.end();
    await h?.close();
  });

  it('registers a passkey and signs in with it through Better Auth’s client; the row and the counter are in service_auth.passkeys', async () => {
    const { client, jar } = passkeyAuthClient(shop);
    const authenticator = new SoftAuthenticator(originOf('shop'));
    expect((await client.signUp.email({ email: 'pia@example.com', password: 'correct horse battery', name: 'Pia' })).error).toBeNull();

    const options = await client.$fetch<any>('/passkey/generate-register-options', { method: 'GET', query: { authenticatorAttachment: 'platform' } });
    expect(options.error).toBeNull();
    expect(options.data).toMatchObject({
      rp: { id: 'shop.localhost', name: 'shop' },
      attestation: 'none',
      user: { name: 'pia@example.com' },
      authenticatorSelection: { authenticatorAttachment: 'platform', residentKey: 'preferred' },
    });
    expect(jar.has('__Secure-slipway.passkey_challenge')).toBe(true);
    const registered = await client.$fetch<any>('/passkey/verify-registration', {
      method: 'POST',
      body: { response: authenticator.register(options.data), name: 'Pia’s laptop' },
    });
    expect(registered.error).toBeNull();
    expect(registered.data).toMatchObject({
      name: 'Pia’s laptop',
      credentialID: authenticator.credentials[0]!.id,
      counter: 0,
      deviceType: 'singleDevice',
      backedUp: false,
      transports: 'internal',
    });
    expect(jar.has('__Secure-slipway.passkey_challenge')).toBe(false);

    const rows = await tenantQuery(
      shop,
      `SELECT p.name, p.credential_id, p.counter, p.device_type, p.transports, p.aaguid, u.email FROM service_auth.passkeys p JOIN service_auth.users u ON u.id = p.user_id`,
    );
    expect(rows).toEqual([
      {
        name: 'Pia’s laptop',
        credential_id: authenticator.credentials[0]!.id,
        counter: '0',
        device_type: 'singleDevice',
        transports: 'internal',
        aaguid: '00000000-0000-0000-0000-000000000000',
        email: 'pia@example.com',
      },
    ]);
    const listed = await client.$fetch<any[]>('/passkey/list-user-passkeys', { method: 'GET' });
    expect(listed.data).toEqual([expect.objectContaining({ id: registered.data.id, credentialID: authenticator.credentials[0]!.id })]);
    // Registered once: the next options exclude it.
    const again = await client.$fetch<any>('/passkey/generate-register-options', { method: 'GET' });
    expect(again.data.excludeCredentials).toEqual([{ id: authenticator.credentials[0]!.id, type: 'public-key', transports: ['internal'] }]);

    await client.signOut();
    expect((await client.getSession()).data).toBeNull();
    const authOptions = await client.$fetch<any>('/passkey/generate-authenticate-options', { method: 'GET' });
    expect(authOptions.data).toMatchObject({ rpId: 'shop.localhost', userVerification: 'preferred' });
    expect(authOptions.data.allowCredentials).toBeUndefined();
    const signedIn = await client.$fetch<any>('/passkey/verify-authentication', {
      method: 'POST',
      body: { response: authenticator.authenticate(authOptions.data) },
    });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toMatchObject({ session: { token: expect.any(String), userId: registered.data.userId }, user: { email: 'pia@example.com' } });
    expect((await client.getSession()).data?.user.email).toBe('pia@example.com');
    expect((await tenantQuery(shop, `SELECT counter FROM service_auth.passkeys`))[0].counter).toBe('1');
    // Sign-out ended the first session; the passkey made the one there is.
    expect(await tenantQuery(shop, `SELECT count(*)::int AS n FROM service_auth.sessions`)).toEqual([{ n: 1 }]);

    const renamed = await client.$fetch<any>('/passkey/update-passkey', { method: 'POST', body: { id: registered.data.id, name: 'work laptop' } });
    expect(renamed.data).toMatchObject({ passkey: { id: registered.data.id, name: 'work laptop' } });
    expect((await client.$fetch<any>('/passkey/delete-passkey', { method: 'POST', body: { id: registered.data.id } })).data).toEqual({ status: true });
    expect(await tenantQuery(shop, `SELECT * FROM service_auth.passkeys`)).toEqual([]);
  });

  it('answers 404 on every passkey route while the plugin is off', async () => {
    const user = new TestClient(plain.authUrl, originOf('plain'));
    await user.signUp('off@example.com');
    for (const [method, path] of [
      ['GET', '/passkey/generate-register-options'],
      ['GET', '/passkey/generate-authenticate-options'],
      ['GET', '/passkey/list-user-passkeys'],
      ['POST', '/passkey/verify-registration'],
      ['POST', '/passkey/verify-authentication'],
      ['POST', '/passkey/delete-passkey'],
      ['POST', '/passkey/update-passkey'],
    ] as const) {
      const res = await user.request(method, path, method === 'POST' ? { response: {}, id: 'x', name: 'y' } : undefined);
      expect([path, res.status, (await res.json()).code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('needs a session to register, list, rename or delete (401), and a recent one to register (403 SESSION_NOT_FRESH)', async () => {
    const anonymous = new TestClient(shop.authUrl, originOf('shop'));
    for (const [method, path] of [
      ['GET', '/passkey/generate-register-options'],
      ['GET', '/passkey/list-user-passkeys'],
      ['POST', '/passkey/verify-registration'],
      ['POST', '/passkey/delete-passkey'],
      ['POST', '/passkey/update-passkey'],
    ] as const) {
      const res = await anonymous.request(method, path, method === 'POST' ? { response: {}, id: 'x', name: 'y' } : undefined);
      expect([path, res.status, (await res.json()).code]).toEqual([path, 401, 'UNAUTHORIZED']);
    }
    // Options for sign-in need no session.
    expect((await anonymous.get('/passkey/generate-authenticate-options')).status).toBe(200);

    const old = new TestClient(shop.authUrl, originOf('shop'));
    await old.signUp('old@example.com');
    await tenantQuery(
      shop,
      `UPDATE service_auth.sessions s SET created_at = now() - interval '25 hours' FROM service_auth.users u WHERE u.id = s.user_id AND u.email = 'old@example.com'`,
    );
    // The update reaches the session cache by the change notification (asynchronous): poll.
    let stale: Response | undefined;
    for (let i = 0; i < 50 && stale?.status !== 403; i++) {
      stale = await old.get('/passkey/generate-register-options');
      if (stale.status !== 403) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stale!.status).toBe(403);
    expect((await stale!.json()).code).toBe('SESSION_NOT_FRESH');
  });

  it('refuses options and verifications for a page outside the application’s trusted origins', async () => {
    const user = new TestClient(shop.authUrl, originOf('shop'));
    await user.signUp('origin@example.com');
    const authenticator = new SoftAuthenticator(originOf('shop'));

    for (const headers of [{ origin: 'http://evil.example' }, { origin: originOf('mall') }, { origin: 'null' }]) {
      user.origin = null;
      const res = await user.get('/passkey/generate-register-options', headers);
      expect([headers, res.status, (await res.json()).code]).toEqual([headers, 403, 'INVALID_ORIGIN']);
    }
    // A same-origin GET carries no Origin: the Referer stands in, and must be trusted too.
    const byReferer = await user.get('/passkey/generate-authenticate-options', { referer: 'http://mall.localhost:8080/login' });
    expect(byReferer.status).toBe(403);
    const okReferer = await user.get('/passkey/generate-authenticate-options', { referer: 'http://shop.localhost:8080/login' });
    expect((await okReferer.json()).rpId).toBe('shop.localhost');
    // Neither: no RP ID in the options, the browser uses its page's host.
    expect((await (await user.get('/passkey/generate-authenticate-options')).json()).rpId).toBeUndefined();
    user.origin = originOf('shop');

    // The POST from another origin never reaches the handler (the pipeline's origin check).
    let options = await (await user.get('/passkey/generate-register-options')).json();
    user.origin = originOf('mall');
    const fromMall = await user.post('/passkey/verify-registration', { response: authenticator.register(options, { origin: originOf('mall') }) });
    expect([fromMall.status, (await fromMall.json()).code]).toEqual([403, 'INVALID_ORIGIN']);
    user.origin = originOf('shop');

    // A response the browser made on another page (clientDataJSON.origin), or for another RP ID, is refused.
    options = await (await user.get('/passkey/generate-register-options')).json();
    const otherPage = await user.post('/passkey/verify-registration', { response: authenticator.register(options, { origin: 'http://evil.example' }) });
    expect([otherPage.status, (await otherPage.json()).code]).toEqual([400, 'FAILED_TO_VERIFY_REGISTRATION']);
    options = await (await user.get('/passkey/generate-register-options')).json();
    const otherRp = await user.post('/passkey/verify-registration', { response: authenticator.register(options, { rpID: 'localhost' }) });
    expect([otherRp.status, (await otherRp.json()).code]).toEqual([400, 'FAILED_TO_VERIFY_REGISTRATION']);
    // Options made for one trusted page, verified from another trusted page (localhost, allowed): refused.
    options = await (await user.get('/passkey/generate-register-options')).json();
    user.origin = 'http://localhost:5173';
    const moved = await user.post('/passkey/verify-registration', { response: authenticator.register(options, { origin: 'http://localhost:5173' }) });
    expect([moved.status, (await moved.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);
    user.origin = originOf('shop');
    expect(
      await tenantQuery(shop, `SELECT p.id FROM service_auth.passkeys p JOIN service_auth.users u ON u.id = p.user_id WHERE u.email = 'origin@example.com'`),
    ).toEqual([]);

    // Signing in: an assertion made for another page or RP ID is refused.
    const { authenticator: device } = await userWithPasskey(shop, 'origin-2@example.com');
    const visitor = new TestClient(shop.authUrl, originOf('shop'));
    let authOptions = await (await visitor.get('/passkey/generate-authenticate-options')).json();
    const wrongPage = await visitor.post('/passkey/verify-authentication', { response: device.authenticate(authOptions, { origin: 'http://evil.example' }) });
    expect([wrongPage.status, (await wrongPage.json()).code]).toEqual([400, 'AUTHENTICATION_FAILED']);
    authOptions = await (await visitor.get('/passkey/generate-authenticate-options')).json();
    const wrongRp = await visitor.post('/passkey/verify-authentication', { response: device.authenticate(authOptions, { rpID: 'evil.example' }) });
    expect([wrongRp.status, (await wrongRp.json()).code]).toEqual([400, 'AUTHENTICATION_FAILED']);
    expect(visitor.cookies.has('__Secure-slipway.session_token')).toBe(false);
  });

  it('uses a challenge once, within its time, in its own application only; a replayed assertion or a counter that did not grow is refused', async () => {
    const { authenticator } = await userWithPasskey(shop, 'replay@example.com');
    const visitor = new TestClient(shop.authUrl, originOf('shop'));
    const options = await (await visitor.get('/passkey/generate-authenticate-options')).json();
    const challengeCookie = visitor.cookies.get('__Secure-slipway.passkey_challenge')!;
    const assertion = authenticator.authenticate(options);
    const first = await visitor.post('/passkey/verify-authentication', { response: assertion });
    expect(first.status).toBe(200);
    expect(visitor.cookies.has('__Secure-slipway.passkey_challenge')).toBe(false);

    // The same challenge cookie and assertion again (a captured request replayed).
    visitor.cookies.set('__Secure-slipway.passkey_challenge', challengeCookie);
    const replay = await visitor.post('/passkey/verify-authentication', { response: assertion });
    expect([replay.status, (await replay.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);
    // The old assertion against a fresh challenge.
    const attacker = new TestClient(shop.authUrl, originOf('shop'));
    await attacker.get('/passkey/generate-authenticate-options');
    const stale = await attacker.post('/passkey/verify-authentication', { response: assertion });
    expect([stale.status, (await stale.json()).code]).toEqual([400, 'AUTHENTICATION_FAILED']);
    // A signature counter that did not grow (a cloned authenticator): refused, counter unchanged.
    const fresh = await (await attacker.get('/passkey/generate-authenticate-options')).json();
    const cloned = await attacker.post('/passkey/verify-authentication', { response: authenticator.authenticate(fresh, { counter: 1 }) });
    expect([cloned.status, (await cloned.json()).code]).toEqual([400, 'AUTHENTICATION_FAILED']);
    expect(attacker.cookies.has('__Secure-slipway.session_token')).toBe(false);
    expect(
      (
        await tenantQuery(
          shop,
          `SELECT p.counter FROM service_auth.passkeys p JOIN service_auth.users u ON u.id = p.user_id WHERE u.email = 'replay@example.com'`,
        )
      )[0].counter,
    ).toBe('1');

    // Expired (past its five minutes): refused.
    const late = await (await visitor.get('/passkey/generate-authenticate-options')).json();
    await tenantQuery(shop, `UPDATE service_auth.verifications SET expires_at = now() - interval '1 second' WHERE identifier LIKE 'passkey-challenge:%'`);
    const expired = await visitor.post('/passkey/verify-authentication', { response: authenticator.authenticate(late) });
    expect([expired.status, (await expired.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);

    // Without the cookie, with a forged one, or with another application's: refused.
    const noCookie = new TestClient(shop.authUrl, originOf('shop'));
    const none = await noCookie.post('/passkey/verify-authentication', { response: authenticator.authenticate(late) });
    expect([none.status, (await none.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);
    const mallVisitor = new TestClient(mall.authUrl, originOf('mall'));
    const mallOptions = await (await mallVisitor.get('/passkey/generate-authenticate-options')).json();
    noCookie.cookies.set('__Secure-slipway.passkey_challenge', mallVisitor.cookies.get('__Secure-slipway.passkey_challenge')!);
    const foreign = await noCookie.post('/passkey/verify-authentication', { response: authenticator.authenticate({ challenge: mallOptions.challenge }) });
    expect([foreign.status, (await foreign.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);
    // A registration challenge is not an authentication one.
    const { user } = await userWithPasskey(shop, 'kinds@example.com');
    const regOptions = await (await user.get('/passkey/generate-register-options')).json();
    const wrongKind = await user.post('/passkey/verify-authentication', { response: authenticator.authenticate({ challenge: regOptions.challenge }) });
    expect([wrongKind.status, (await wrongKind.json()).code]).toEqual([400, 'CHALLENGE_NOT_FOUND']);
  });

  it('refuses another application’s credential at sign-in, and another user’s registration challenge', async () => {
    // The same authenticator holds a credential for the mall; the shop knows nothing of it.
    const { authenticator } = await userWithPasskey(mall, 'both@example.com', new SoftAuthenticator(originOf('mall')));
    const visitor = new TestClient(shop.authUrl, originOf('shop'));
    const options = await (await visitor.get('/passkey/generate-authenticate-options')).json();
    const foreign = await visitor.post('/passkey/verify-authentication', { response: authenticator.authenticate(options, { origin: originOf('shop') }) });
    expect([foreign.status, (await foreign.json()).code]).toEqual([401, 'PASSKEY_NOT_FOUND']);
    expect(visitor.cookies.has('__Secure-slipway.session_token')).toBe(false);
    expect(await tenantQuery(shop, `SELECT 1 FROM service_auth.passkeys WHERE credential_id = $1`, [authenticator.credentials[0]!.id])).toEqual([]);

    // Ann's registration options, finished in Bob's session (a stolen challenge cookie).
    const ann = new TestClient(shop.authUrl, originOf('shop'));
    await ann.signUp('ann@example.com');
    const annOptions = await (await ann.get('/passkey/generate-register-options')).json();
    const bob = new TestClient(shop.authUrl, originOf('shop'));
    await bob.signUp('bob@example.com');
    bob.cookies.set('__Secure-slipway.passkey_challenge', ann.cookies.get('__Secure-slipway.passkey_challenge')!);
    const stolen = await bob.post('/passkey/verify-registration', { response: new SoftAuthenticator(originOf('shop')).register(annOptions) });
    expect([stolen.status, (await stolen.json()).code]).toEqual([401, 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY']);
  });

  it('lets a user rename or delete only their own passkeys', async () => {
    const { passkey } = await userWithPasskey(shop, 'owner@example.com');
    const other = new TestClient(shop.authUrl, originOf('shop'));
    await other.signUp('other@example.com');
    const del = await other.post('/passkey/delete-passkey', { id: passkey.id });
    expect([del.status, (await del.json()).code]).toEqual([401, 'UNAUTHORIZED']);
    const upd = await other.post('/passkey/update-passkey', { id: passkey.id, name: 'mine now' });
    expect([upd.status, (await upd.json()).code]).toEqual([401, 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY']);
    const unknown = await other.post('/passkey/delete-passkey', { id: 'no-such-passkey' });
    expect([unknown.status, (await unknown.json()).code]).toEqual([404, 'PASSKEY_NOT_FOUND']);
    expect(await (await other.get('/passkey/list-user-passkeys')).json()).toEqual([]);
    expect(await tenantQuery(shop, `SELECT name FROM service_auth.passkeys WHERE id = $1`, [passkey.id])).toEqual([{ name: 'laptop' }]);
  });

  it('a counter-less authenticator (always 0) signs in again and again; the row’s user going deletes its passkeys', async () => {
    const { authenticator } = await userWithPasskey(shop, 'zero@example.com', new SoftAuthenticator(originOf('shop'), false));
    for (let i = 0; i < 2; i++) {
      const visitor = new TestClient(shop.authUrl, originOf('shop'));
      const options = await (await visitor.get('/passkey/generate-authenticate-options')).json();
      expect((await visitor.post('/passkey/verify-authentication', { response: authenticator.authenticate(options) })).status).toBe(200);
    }
    await tenantQuery(shop, `DELETE FROM service_auth.users WHERE email = 'zero@example.com'`);
    expect(await tenantQuery(shop, `SELECT 1 FROM service_auth.passkeys WHERE credential_id = $1`, [authenticator.credentials[0]!.id])).toEqual([]);
  });
});
