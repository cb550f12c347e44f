import { Redis } from 'ioredis';
import { tenantChangedChannel } from '@slipway/messaging';
import { TEST_REDIS_URL, waitFor } from '@slipway/testing';
import { TenantPools } from '../src/tenants/tenant-pools.js';
import { TenantsService } from '../src/tenants/tenants.service.js';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('tenant routing, pools and cached configuration', () => {
  let h: AuthHarness;
  const slugs = ['red', 'green', 'blue'];
  const clients = new Map<string, TestClient>();

  beforeAll(async () => {
    h = await startAuthHarness('authtenants', { AUTH_MAX_TENANT_POOLS: '2', AUTH_TENANT_CACHE_SECONDS: '300' });
    for (const slug of slugs) {
      const tenant = await h.createTenant(slug);
      const c = new TestClient(tenant.authUrl, originOf(slug));
      expect((await c.signUp('shared@example.com', `password of ${slug}`, `User of ${slug}`)).status).toBe(200);
      clients.set(slug, c);
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it('never crosses tenants under interleaved concurrent requests, with at most AUTH_MAX_TENANT_POOLS pools open', async () => {
    const requests = Array.from({ length: 60 }, (_, i) => slugs[i % 3]!);
    const names = await Promise.all(requests.map(async (slug) => (await (await clients.get(slug)!.get('/get-session')).json()).user.name));
    expect(names).toEqual(requests.map((slug) => `User of ${slug}`));
    expect(h.app.get(TenantPools).size).toBeLessThanOrEqual(2);
    // Passwords are per tenant too.
    expect((await new TestClient(`${h.url}/a/red`, originOf('red')).signIn('shared@example.com', 'password of green')).status).toBe(401);
  });

  it('drops cached tenant configuration on every replica when a change is announced over Redis', async () => {
    const red = await h.prisma.application.findUniqueOrThrow({ where: { slug: 'red' } });
    const c = new TestClient(`${h.url}/a/red`, 'https://red.example.org');
    expect((await c.signIn('shared@example.com', 'password of red')).status).toBe(403);
    await h.prisma.trustedOrigin.create({ data: { applicationId: red.id, origin: 'https://red.example.org', source: 'manual' } });
    // Still cached: the change is not seen until it is announced.
    expect((await c.signIn('shared@example.com', 'password of red')).status).toBe(403);
    const publisher = new Redis(TEST_REDIS_URL);
    try {
      const channel = tenantChangedChannel();
      await publisher.publish(channel.name, channel.encode({ applicationId: red.id }));
    } finally {
      publisher.disconnect();
    }
    await waitFor(async () => (await c.signIn('shared@example.com', 'password of red')).status === 200, {
      timeoutMs: 5000,
      what: 'the new origin to be trusted',
    });
  });

  it('deletes an expired session on sight and slides a remembered session once a day', async () => {
    const c = new TestClient(`${h.url}/a/blue`, originOf('blue'));
    await c.signIn('shared@example.com', 'password of blue');
    const { session } = await (await c.get('/get-session')).json();
    const tenant = await h.app.get(TenantsService).resolve('blue');
    const db = h.app.get(TenantsService).db(tenant);

    // A write from outside the service reaches its session cache through service_auth's NOTIFY,
    // which arrives a moment later (SessionCache's contract): until then the cached session answers.
    const afterNotify = { timeoutMs: 5000, intervalMs: 50, what: 'the database change to reach the session cache (NOTIFY)' };
    await db.query(`UPDATE service_auth.sessions SET expires_at = now() + interval '5 days' WHERE id = $1`, [session.id]);
    const slid = await waitFor(async () => {
      const reply = await c.get('/get-session');
      return reply.headers.getSetCookie().length > 0 ? reply : undefined;
    }, afterNotify);
    expect(slid.headers.getSetCookie()[0]).toMatch(/Max-Age=604800/);
    expect(new Date((await slid.json()).session.expiresAt).getTime()).toBeGreaterThan(Date.now() + 6.9 * 24 * 3600 * 1000);

    await db.query(`UPDATE service_auth.sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [session.id]);
    await waitFor(async () => ((await (await c.get('/get-session')).json()) === null ? true : undefined), afterNotify);
    expect((await db.query('SELECT 1 FROM service_auth.sessions WHERE id = $1', [session.id])).rowCount).toBe(0);
  });

  it('ends a session AUTH_SESSION_ABSOLUTE_DAYS (30) after sign-in, however active', async () => {
    const c = new TestClient(`${h.url}/a/blue`, originOf('blue'));
    await c.signIn('shared@example.com', 'password of blue');
    const { session } = await (await c.get('/get-session')).json();
    const tenant = await h.app.get(TenantsService).resolve('blue');
    const db = h.app.get(TenantsService).db(tenant);
    // Near the end: a refresh may not carry it past 30 days from sign-in.
    // As above: the cache hears of these outside writes through NOTIFY, a moment later.
    const afterNotify = { timeoutMs: 5000, intervalMs: 50, what: 'the database change to reach the session cache (NOTIFY)' };
    await db.query(`UPDATE service_auth.sessions SET created_at = now() - interval '29 days', expires_at = now() + interval '5 days' WHERE id = $1`, [
      session.id,
    ]);
    const near = await waitFor(async () => {
      const body = await (await c.get('/get-session')).json();
      return body && new Date(body.session.createdAt).getTime() < Date.now() - 28 * 24 * 3600 * 1000 ? body : undefined;
    }, afterNotify);
    expect(new Date(near.session.expiresAt).getTime()).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000 + 5000);
    await db.query(`UPDATE service_auth.sessions SET created_at = now() - interval '30 days 1 minute', expires_at = now() + interval '6 days' WHERE id = $1`, [
      session.id,
    ]);
    await waitFor(async () => ((await (await c.get('/get-session')).json()) === null ? true : undefined), afterNotify);
    expect((await c.get('/token')).status).toBe(401);
  });

  it('never lets two passwords that share their first 72 bytes match (bcrypt truncation)', async () => {
    const c = new TestClient(`${h.url}/a/green`, originOf('green'));
    const base = 'p'.repeat(72);
    expect((await c.signUp('long@example.com', base)).status).toBe(200);
    const res = await c.signIn('long@example.com', `${base}extra`);
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('INVALID_EMAIL_OR_PASSWORD');
  });
});
