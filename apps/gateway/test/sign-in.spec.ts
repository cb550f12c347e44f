import { dropApplicationDatabase } from '@slipway/sign-in-core';
import { tenantChangedChannel } from '@slipway/messaging';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { TEST_REDIS_URL, TEST_SERVER_URL, TestDnsServer } from '@slipway/testing';
import { Redis } from 'ioredis';
import { DashboardClient } from './support/dashboard-client.js';
import { send } from './support/http.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

const DOC = 'http://localhost:3000/api/v1#error-';

describe('/api/v1/auth: switching sign-in on (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let pat: string;
  const created: string[] = [];
  const announced: string[] = [];
  let subscriber: Redis;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGateway('sign-in', { BCRYPT_ROUNDS: '4', AUTH_PUBLIC_URL: 'http://auth.test:3001', SLIPWAY_DNS_SERVERS: dns.address });
    subscriber = new Redis(TEST_REDIS_URL);
    const channel = tenantChangedChannel();
    subscriber.on('message', (_channel: string, message: string) => announced.push(channel.decode(message).applicationId));
    await subscriber.subscribe(channel.name);
    ada = new DashboardClient(gw.url);
    await ada.signUp(`ada-${Date.now()}@example.com`);
    pat = (await ada.post('/tokens', { name: 'cli' })).json.token;
  });
  afterAll(async () => {
    subscriber.disconnect();
    for (const id of created) await dropApplicationDatabase(TEST_SERVER_URL, id);
    await gw.close();
    await dns.close();
  });

  async function newApplication(name: string): Promise<{ id: string; slug: string; key: string }> {
    const app = (await ada.post('/applications', { name })).json;
    created.push(app.id);
    const key = (await ada.post(`/applications/${app.id}/api-keys`, { name: 'ci' })).json.key;
    return { id: app.id, slug: app.slug, key };
  }
  const call = (method: string, path: string, token = pat) => send(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const enable = (id: string, token = pat) => call('POST', `/api/v1/auth?applicationId=${id}`, token);
  const count = async (table: string, id: string) =>
    Number((await gw.sql.query(`SELECT count(*) FROM ${table} WHERE application_id = $1`, [id])).rows[0].count);
  const bad = (code: string) => ({ error: expect.any(String), code, documentation: `${DOC}${code}` });

  it('switches on once: 201 then 200 with the same record, one record under concurrent calls, announced to the sign-in service', async () => {
    const app = await newApplication('Shop');
    const results = await Promise.all([enable(app.id), enable(app.id), enable(app.id)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    const record = results[0]!.json;
    expect(record).toEqual({
      applicationId: app.id,
      baseUrl: `http://auth.test:3001/a/${app.slug}`,
      jwksUrl: `http://auth.test:3001/a/${app.slug}/jwks`,
      trustedOrigins: [`http://${app.slug}.localhost:8080`],
      settings: { emailAndPassword: true, requireEmailVerification: false, allowLocalhost: true, socialProviders: [] },
      createdAt: expect.any(String),
    });
    for (const r of results) expect(r.json).toEqual(record);
    const again = await enable(app.id);
    expect([again.status, again.json]).toEqual([200, record]);
    expect(await count('sign_in_services', app.id)).toBe(1);
    expect(await count('application_databases', app.id)).toBe(1);
    const deadline = Date.now() + 5000;
    while (!announced.includes(app.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(announced).toContain(app.id);

    const env = await call('GET', `/api/v1/auth/env?applicationId=${app.id}`);
    expect(env.status).toBe(200);
    expect(env.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(env.headers['cache-control']).toBe('no-store');
    const stored = (await gw.sql.query('SELECT cookie_secret FROM sign_in_services WHERE application_id = $1', [app.id])).rows[0].cookie_secret;
    const secret = decryptEnvelopeToString(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), stored, envelopeBinding.cookieSecret(app.id));
    expect(env.text).toBe(
      `SERVICE_AUTH_BASE_URL=http://auth.test:3001/a/${app.slug}\nSERVICE_AUTH_COOKIE_SECRET=${secret}\nSERVICE_AUTH_JWKS_URL=http://auth.test:3001/a/${app.slug}/jwks\nVITE_SERVICE_AUTH_URL=http://auth.test:3001/a/${app.slug}\n`,
    );

    // The application's own project API key works too, for its own application only.
    expect((await enable(app.id, app.key)).json).toEqual(record);
    const list = await call('GET', '/api/v1/auth', app.key);
    expect(list.json).toEqual({ services: [record] });
    expect(list.text).not.toContain(secret);
    expect((await call('GET', '/api/v1/auth')).json.services.map((s: { applicationId: string }) => s.applicationId)).toContain(app.id);
  });

  it('refuses what it should, in the deploy API error shape', async () => {
    const app = await newApplication('Plain');
    const other = await newApplication('Other');
    expect((await call('GET', `/api/v1/auth/env?applicationId=${app.id}`)).json).toEqual(bad('not_found'));
    expect((await call('GET', `/api/v1/auth/env?applicationId=${app.id}`)).status).toBe(404);
    expect((await enable(app.id, other.key)).json).toEqual(bad('not_found'));
    expect((await enable('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await enable('not-a-uuid')).status).toBe(404);
    expect((await call('POST', '/api/v1/auth')).json).toEqual(bad('bad_request'));
    const noToken = await send(`${gw.url}/api/v1/auth?applicationId=${app.id}`, { method: 'POST' });
    expect([noToken.status, noToken.json, noToken.headers['www-authenticate']]).toEqual([401, bad('unauthorized'), 'Bearer realm="slipway"']);
    expect((await enable(app.id, `${pat.slice(0, -1)}x`)).status).toBe(401);
    expect((await enable(app.id, 'slw_pat_nonsense')).status).toBe(401);
    // The deployment API keeps accepting project API keys only.
    expect((await call('GET', '/api/v1/secrets')).json).toEqual(bad('unauthorized'));
    // Another owner's token sees nothing of Ada's.
    const eve = new DashboardClient(gw.url);
    await eve.signUp(`eve-${Date.now()}@example.com`);
    const evePat = (await eve.post('/tokens', { name: 'x' })).json.token;
    expect((await enable(app.id, evePat)).status).toBe(404);
    expect((await call('GET', '/api/v1/auth', evePat)).json).toEqual({ services: [] });
    expect(await count('sign_in_services', app.id)).toBe(0);
  });

  it('409 auth_owned_by_project names the variable the project set; nothing created', async () => {
    const app = await newApplication('Own DB');
    const put = (secrets: Record<string, string | null>) =>
      send(`${gw.url}/api/v1/secrets`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ secrets })),
      });
    await put({ DATABASE_URL: 'postgres://me@db.example.com/mine' });
    const refused = await enable(app.id);
    expect([refused.status, refused.json]).toEqual([409, { ...bad('auth_owned_by_project'), variable: 'DATABASE_URL' }]);
    expect(refused.json.error).toContain('DATABASE_URL');
    await put({ DATABASE_URL: null, SERVICE_AUTH_BASE_URL: 'https://auth.example.com' });
    expect((await enable(app.id)).json).toMatchObject({ code: 'auth_owned_by_project', variable: 'SERVICE_AUTH_BASE_URL' });
    expect(await count('application_databases', app.id)).toBe(0);
    expect(await count('sign_in_services', app.id)).toBe(0);
  });

  it('403 database_limit_reached over the plan allowance, nothing created; a bigger plan allows more', async () => {
    // Ada (free: 1 database) already has one from the first test.
    const app = await newApplication('Second');
    const refused = await enable(app.id);
    expect([refused.status, refused.json]).toEqual([403, { ...bad('database_limit_reached'), plan: 'free', allowed: 1, used: 1 }]);
    expect(await count('application_databases', app.id)).toBe(0);
    expect(await count('sign_in_services', app.id)).toBe(0);
    const databases = await gw.sql.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [`app_${app.id.replace(/-/g, '')}`]);
    expect(databases.rowCount).toBe(0);

    await gw.sql.query(`UPDATE owners SET plan = 'pro' WHERE id = (SELECT owner_id FROM applications WHERE id = $1)`, [app.id]);
    const third = await newApplication('Third');
    const fourth = await newApplication('Fourth');
    // Two applications switched on at once: both fit (3 on pro), a third would not.
    const both = await Promise.all([enable(app.id), enable(third.id)]);
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect((await enable(fourth.id)).json).toMatchObject({ code: 'database_limit_reached', plan: 'pro', allowed: 3, used: 3 });
  });

  it('registers a custom domain added in the dashboard as a trusted origin once it is verified, and removes it with the domain', async () => {
    const app = (await call('GET', '/api/v1/auth')).json.services[0];
    const services = async () =>
      (await call('GET', '/api/v1/auth')).json.services.find((s: { applicationId: string }) => s.applicationId === app.applicationId);
    const added = await ada.post(`/applications/${app.applicationId}/domains`, { hostname: 'shop.example.com' });
    expect(added.status).toBe(201);
    // A claim proves nothing: not trusted until its TXT record is found.
    expect((await services()).trustedOrigins).toEqual(app.trustedOrigins);
    announced.length = 0;
    dns.setTxt(added.json.record.name, [added.json.record.value]);
    expect((await ada.post(`/applications/${app.applicationId}/domains/${added.json.id}/verify`)).status).toBe(200);
    const deadline = Date.now() + 5000;
    while (!announced.includes(app.applicationId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(announced).toContain(app.applicationId);
    expect((await services()).trustedOrigins).toEqual(expect.arrayContaining(['http://shop.example.com', 'https://shop.example.com', ...app.trustedOrigins]));
    await ada.delete(`/applications/${app.applicationId}/domains/${added.json.id}`);
    expect((await services()).trustedOrigins).toEqual(app.trustedOrigins);
  });
});
