import pg from 'pg';
import { TEST_SERVER_URL } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('sign-up, sign-in and sessions (real Postgres, Redis, HTTP)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; slug: string; authUrl: string };
  let blog: { applicationId: string; slug: string; authUrl: string };

  beforeAll(async () => {
    h = await startAuthHarness('authsessions');
    shop = await h.createTenant('shop');
    blog = await h.createTenant('blog');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('signs up, signs in with a new session each time, reads the session and signs out', async () => {
    const alice = new TestClient(shop.authUrl, originOf('shop'));
    const up = await alice.signUp('Alice@Example.com');
    expect(up.status).toBe(200);
    const upBody = await up.json();
    expect(upBody).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      user: expect.objectContaining({
        id: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        email: 'alice@example.com',
        name: 'Test User',
        emailVerified: false,
        image: null,
      }),
    });

    const cookieLine = up.headers.getSetCookie()[0]!;
    expect(cookieLine).toMatch(
      /^__Secure-slipway\.session_token=[A-Za-z0-9]{32}\.[A-Za-z0-9%]+; Max-Age=604800; Path=\/a\/shop; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(cookieLine).not.toMatch(/Domain=/i);

    const session = await alice.get('/get-session');
    expect(session.status).toBe(200);
    expect(session.headers.get('cache-control')).toBe('no-store');
    expect(session.headers.get('set-auth-jwt')).toMatch(/^ey/);
    const sessionBody = await session.json();
    expect(sessionBody.user).toMatchObject({ email: 'alice@example.com', id: upBody.user.id });
    expect(sessionBody.session).toMatchObject({ token: upBody.token, userId: upBody.user.id, ipAddress: '127.0.0.1' });

    const firstToken = upBody.token;
    const again = new TestClient(shop.authUrl, originOf('shop'));
    const signIn = await again.signIn('alice@example.com');
    expect(signIn.status).toBe(200);
    const signInBody = await signIn.json();
    expect(signInBody).toMatchObject({ redirect: false, token: expect.any(String), user: { email: 'alice@example.com' } });
    expect(signInBody.token).not.toBe(firstToken);

    const out = await again.post('/sign-out');
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ success: true });
    expect(out.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
    const replay = new TestClient(shop.authUrl, originOf('shop'));
    replay.cookies.set('__Secure-slipway.session_token', signIn.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]!);
    expect(await (await replay.get('/get-session')).json()).toBeNull();
    expect((await replay.get('/token')).status).toBe(401);
    // The first session is untouched.
    expect((await (await alice.get('/get-session')).json()).session.token).toBe(firstToken);
  });

  it('stores only hashed tokens, in the application database of its own', async () => {
    const bob = new TestClient(shop.authUrl, originOf('shop'));
    const { token } = await (await bob.signUp('bob@example.com')).json();
    const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: shop.applicationId } });
    const client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT s.token_hash, a.password FROM service_auth.sessions s JOIN service_auth.users u ON u.id = s.user_id JOIN service_auth.accounts a ON a.user_id = u.id WHERE u.email = 'bob@example.com'`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).not.toContain(token);
      expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0].password).toMatch(/^\$2[ab]\$10\$/);
    } finally {
      await client.end();
    }
  });

  it('rejects a duplicate sign-up (any letter case) with 422 and bad input with Better Auth codes', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('carol@example.com');
    const dup = await c.signUp('CAROL@example.com');
    expect(dup.status).toBe(422);
    expect(await dup.json()).toEqual({ code: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL', message: 'User already exists. Use another email.' });

    const short = await c.signUp('dave@example.com', 'short');
    expect(short.status).toBe(400);
    expect((await short.json()).code).toBe('PASSWORD_TOO_SHORT');
    const long = await c.signUp('dave@example.com', 'é'.repeat(37));
    expect(long.status).toBe(400);
    expect((await long.json()).code).toBe('PASSWORD_TOO_LONG');
    const badEmail = await c.signUp('not-an-email');
    expect(badEmail.status).toBe(400);
    expect((await badEmail.json()).code).toBe('INVALID_EMAIL');
    const noName = await c.post('/sign-up/email', { email: 'erin@example.com', password: 'long enough pw' });
    expect(noName.status).toBe(400);
    expect((await noName.json()).code).toBe('VALIDATION_ERROR');
  });

  it('answers an unknown email exactly like a wrong password', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('frank@example.com');
    const wrong = await c.signIn('frank@example.com', 'wrong password!');
    const unknown = await c.signIn('nobody@example.com', 'wrong password!');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const [a, b] = [await wrong.text(), await unknown.text()];
    expect(a).toBe(b);
    expect(JSON.parse(a)).toEqual({ code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' });
    const strip = (r: Response) => [...r.headers].filter(([k]) => !['date', 'content-length', 'etag'].includes(k));
    expect(strip(wrong)).toEqual(strip(unknown));
  });

  it('keeps two tenants with the same email independent; one tenant’s cookie means nothing to another', async () => {
    const inShop = new TestClient(shop.authUrl, originOf('shop'));
    const inBlog = new TestClient(blog.authUrl, originOf('blog'));
    const a = await (await inShop.signUp('same@example.com', 'password-in-shop')).json();
    const b = await (await inBlog.signUp('same@example.com', 'password-in-blog')).json();
    expect(a.user.id).not.toBe(b.user.id);
    expect((await inBlog.signIn('same@example.com', 'password-in-shop')).status).toBe(401);

    const stolen = new TestClient(blog.authUrl, originOf('blog'));
    stolen.cookies.set('__Secure-slipway.session_token', inShop.cookies.get('__Secure-slipway.session_token')!);
    expect(await (await stolen.get('/get-session')).json()).toBeNull();
    expect((await stolen.get('/token')).status).toBe(401);
  });

  it('lists sessions, revokes one at once, and revokes the others', async () => {
    const laptop = new TestClient(shop.authUrl, originOf('shop'));
    await laptop.signUp('gina@example.com');
    const phone = new TestClient(shop.authUrl, originOf('shop'));
    await phone.signIn('gina@example.com');
    const tablet = new TestClient(shop.authUrl, originOf('shop'));
    await tablet.signIn('gina@example.com');

    const list = await (await laptop.get('/list-sessions')).json();
    expect(list).toHaveLength(3);
    const phoneSession = (await (await phone.get('/get-session')).json()).session;
    const revoke = await laptop.post('/revoke-session', { token: list.find((s: { id: string }) => s.id === phoneSession.id).token });
    expect(await revoke.json()).toEqual({ status: true });
    expect(await (await phone.get('/get-session')).json()).toBeNull();

    expect((await laptop.post('/revoke-other-sessions')).status).toBe(200);
    expect(await (await tablet.get('/get-session')).json()).toBeNull();
    expect(await (await laptop.get('/get-session')).json()).not.toBeNull();
    expect((await laptop.post('/revoke-sessions')).status).toBe(200);
    expect(await (await laptop.get('/get-session')).json()).toBeNull();
  });

  it('updates the user, answers /ok and 404 for an unknown tenant', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('hank@example.com');
    expect(await (await c.post('/update-user', { name: 'Hank H', image: 'https://img.example/h.png' })).json()).toEqual({ status: true });
    expect((await (await c.get('/get-session')).json()).user).toMatchObject({ name: 'Hank H', image: 'https://img.example/h.png' });
    expect((await c.post('/update-user', { email: 'x@example.com' })).status).toBe(400);
    expect(await (await c.get('/ok')).json()).toEqual({ ok: true });
    const malformed = await fetch(`${shop.authUrl}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: originOf('shop') },
      body: '{bad',
    });
    // Rejected by the body parser before the service sees it, so in the platform's error shape.
    expect(malformed.status).toBe(400);
    const noRoute = await c.get('/no-such-endpoint');
    expect(noRoute.status).toBe(404);
    expect(await noRoute.json()).toEqual({ code: 'NOT_FOUND', message: 'Not found' });
    const missing = await fetch(`${h.url}/a/no-such-app/get-session`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
