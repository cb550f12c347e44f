import { createHash } from 'node:crypto';
import pg from 'pg';
import { createAuthClient } from 'better-auth/client';
import { magicLinkClient } from 'better-auth/client/plugins';
import { TEST_SERVER_URL } from '@slipway/testing';
import { browserLikeFetch, startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

type Tenant = { applicationId: string; slug: string; authUrl: string };

const browser = (origin: string) => browserLikeFetch(origin, { redirect: 'manual' });

describe('magic links (Better Auth’s magicLinkClient against the service)', () => {
  let h: AuthHarness;
  let shop: Tenant;
  let blog: Tenant;
  let plain: Tenant;
  const dbs = new Map<string, pg.Client>();

  const on = { plugins: { magicLink: { enabled: true } } };
  const clientFor = (tenant: Tenant) => {
    const b = browser(originOf(tenant.slug));
    return { ...b, client: createAuthClient({ baseURL: tenant.authUrl, plugins: [magicLinkClient()], fetchOptions: { customFetchImpl: b.impl } }) };
  };
  const lastLink = async (tenant: Tenant, to: string) => {
    const email = await h.prisma.email.findFirstOrThrow({ where: { applicationId: tenant.applicationId, toAddress: to }, orderBy: { createdAt: 'desc' } });
    expect(email).toMatchObject({ kind: 'magic_link', status: 'outbox' });
    return new URL(/(http\S+)/.exec(email.textBody)![1]!);
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
  const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

  beforeAll(async () => {
    h = await startAuthHarness('authmagiclink');
    shop = await h.createTenant('shop', { settings: on });
    blog = await h.createTenant('blog', { settings: on });
    plain = await h.createTenant('plain');
  });
  afterAll(async () => {
    for (const client of dbs.values()) await client.end();
    await h?.close();
  });

  it('signs a new user up through the emailed link, once: token hashed in service_auth.verifications, session, verified email', async () => {
    const { client, impl, jar } = clientFor(shop);
    const page = originOf('shop');
    const sent = await client.signIn.magicLink({
      email: 'Mia@Example.com',
      name: 'Mia',
      callbackURL: `${page}/home`,
      newUserCallbackURL: `${page}/welcome`,
      errorCallbackURL: `${page}/oops`,
    });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({ status: true });

    const link = await lastLink(shop, 'mia@example.com');
    expect(`${link.origin}${link.pathname}`).toBe(`${shop.authUrl}/magic-link/verify`);
    const token = link.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(link.searchParams.get('callbackURL')).toBe(`${page}/home`);
    const rows = await tenantQuery(
      shop,
      `SELECT identifier, value, expires_at - created_at AS ttl FROM service_auth.verifications WHERE identifier LIKE 'magic-link:%'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].identifier).toBe(`magic-link:${sha256(token)}`);
    expect(JSON.stringify(rows[0])).not.toContain(token);
    expect(JSON.parse(rows[0].value)).toEqual({ type: 'magic-link', email: 'mia@example.com', name: 'Mia' });
    expect(rows[0].ttl).toMatchObject({ minutes: 5 });

    const opened = await impl(link);
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toBe(`${page}/welcome`);
    expect(jar.size).toBe(1);
    const session = await client.getSession();
    expect(session.data?.user).toMatchObject({ email: 'mia@example.com', name: 'Mia', emailVerified: true });
    expect(await tenantQuery(shop, `SELECT 1 FROM service_auth.verifications WHERE identifier = $1`, [`magic-link:${sha256(token)}`])).toEqual([]);

    // Used twice: refused, to the error page, and no session for whoever tries.
    const again = clientFor(shop);
    const replay = await again.impl(link);
    expect(replay.status).toBe(302);
    expect(replay.headers.get('location')).toBe(`${page}/oops?error=INVALID_TOKEN`);
    expect(again.jar.size).toBe(0);

    // A known user the next time: to callbackURL; without callbackURL the verify answers JSON (Better Auth's).
    await client.signIn.magicLink({ email: 'mia@example.com', callbackURL: `${page}/home` });
    const second = await impl(await lastLink(shop, 'mia@example.com'));
    expect(second.headers.get('location')).toBe(`${page}/home`);
    await client.signIn.magicLink({ email: 'mia@example.com' });
    const third = clientFor(shop);
    const verified = await third.client.magicLink.verify({ query: { token: (await lastLink(shop, 'mia@example.com')).searchParams.get('token')! } });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ token: expect.any(String), user: { email: 'mia@example.com' }, session: { userId: session.data!.user.id } });
    expect((await third.client.getSession()).data?.user.email).toBe('mia@example.com');
    expect(await tenantQuery(shop, `SELECT count(*)::int AS n FROM service_auth.users WHERE email = 'mia@example.com'`)).toEqual([{ n: 1 }]);
  });

  it('refuses an expired link (expires_at in the past) and answers every address alike', async () => {
    const { client, impl, jar } = clientFor(shop);
    const known = await client.signIn.magicLink({ email: 'mia@example.com', callbackURL: '/home' });
    const unknown = await client.signIn.magicLink({ email: 'nobody@example.com', callbackURL: '/home' });
    expect(known.data).toEqual(unknown.data);
    const link = await lastLink(shop, 'nobody@example.com');
    await tenantQuery(shop, `UPDATE service_auth.verifications SET expires_at = now() - interval '1 second' WHERE identifier = $1`, [
      `magic-link:${sha256(link.searchParams.get('token')!)}`,
    ]);
    const expired = await impl(link);
    expect(expired.status).toBe(302);
    expect(expired.headers.get('location')).toBe('/home?error=INVALID_TOKEN');
    expect(jar.size).toBe(0);
    expect(await tenantQuery(shop, `SELECT 1 FROM service_auth.users WHERE email = 'nobody@example.com'`)).toEqual([]);
  });

  it('refuses a link issued by another application (each keeps its tokens in its own database)', async () => {
    const { client } = clientFor(shop);
    await client.signIn.magicLink({ email: 'ned@example.com', callbackURL: '/home' });
    const link = await lastLink(shop, 'ned@example.com');
    const atBlog = new URL(`${blog.authUrl}/magic-link/verify${link.search}`);
    const b = clientFor(blog);
    const refused = await b.impl(atBlog);
    expect(refused.status).toBe(302);
    expect(refused.headers.get('location')).toBe('/home?error=INVALID_TOKEN');
    expect(b.jar.size).toBe(0);
    expect(await tenantQuery(blog, `SELECT 1 FROM service_auth.users WHERE email = 'ned@example.com'`)).toEqual([]);
    // The link still works where it was issued.
    const s = clientFor(shop);
    expect((await s.impl(link)).headers.get('location')).toBe('/home');
    expect((await s.client.getSession()).data?.user.email).toBe('ned@example.com');
  });

  it('takes back an unverified account someone else signed up with the address: its password and sessions go', async () => {
    const squatter = new TestClient(shop.authUrl, originOf('shop'));
    expect((await squatter.signUp('olga@example.com', 'squatter password')).status).toBe(200);
    expect(await (await squatter.get('/get-session')).json()).not.toBeNull();

    const owner = clientFor(shop);
    await owner.client.signIn.magicLink({ email: 'olga@example.com', callbackURL: '/home' });
    expect((await owner.impl(await lastLink(shop, 'olga@example.com'))).status).toBe(302);
    expect((await owner.client.getSession()).data?.user).toMatchObject({ email: 'olga@example.com', emailVerified: true });
    expect(await (await squatter.get('/get-session')).json()).toBeNull();
    expect((await new TestClient(shop.authUrl, originOf('shop')).signIn('olga@example.com', 'squatter password')).status).toBe(401);
    expect(
      await tenantQuery(
        shop,
        `SELECT a.provider_id FROM service_auth.accounts a JOIN service_auth.users u ON u.id = a.user_id WHERE u.email = 'olga@example.com'`,
      ),
    ).toEqual([]);
  });

  it('checks the redirect targets first, and is an unknown path while the plugin is off', async () => {
    const { client } = clientFor(shop);
    const evil = await client.signIn.magicLink({ email: 'pat@example.com', callbackURL: 'https://evil.example/' });
    expect(evil.error).toMatchObject({ status: 403, code: 'INVALID_CALLBACK_URL' });
    expect(await h.prisma.email.count({ where: { applicationId: shop.applicationId, toAddress: 'pat@example.com' } })).toBe(0);

    const off = clientFor(plain);
    const send = await off.client.signIn.magicLink({ email: 'pat@example.com' });
    expect(send.error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect((await off.impl(`${plain.authUrl}/magic-link/verify?token=abc&callbackURL=/home`)).status).toBe(404);
    expect(await h.prisma.email.count({ where: { applicationId: plain.applicationId } })).toBe(0);
  });
});
