import { decryptEnvelopeToString, encryptEnvelope, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { TestDnsServer } from '@slipway/testing';
import { DashboardClient, DASHBOARD_ORIGIN } from './support/dashboard-client.js';
import { send } from './support/http.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

describe('dashboard API /dashboard/api (real HTTP, Postgres)', () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let eve: DashboardClient;
  let appId: string;
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGateway('dashboard-api', { BCRYPT_ROUNDS: '4', SLIPWAY_DNS_SERVERS: dns.address });
    ada = new DashboardClient(gw.url);
    eve = new DashboardClient(gw.url);
    expect((await ada.signUp('ada@example.com')).status).toBe(201);
    expect((await eve.signUp('eve@example.com')).status).toBe(201);
    appId = (await ada.post('/applications', { name: 'Main Shop' })).json.id;
  });
  afterAll(async () => {
    await gw.close();
    await dns.close();
  });

  describe('owner sign-up, sign-in, sign-out', () => {
    it('signs up: HttpOnly SameSite=Lax cookie (not Secure over http), bcrypt hash, session stored hashed, plan and database allowance', async () => {
      const client = new DashboardClient(gw.url);
      const res = await client.signUp('New.Owner@Example.com');
      expect(res.status).toBe(201);
      expect(res.json).toEqual({ id: expect.any(String), email: 'new.owner@example.com', name: 'Ada', plan: 'free', databases: { used: 0, allowed: 1 } });
      const cookie = ([] as string[]).concat(res.headers['set-cookie']!).join(';');
      expect(cookie).toMatch(/slipway_session=[\w-]{43}; Path=\/; Expires=.*; HttpOnly; SameSite=Lax/);
      expect(cookie).not.toMatch(/Secure/);
      const token = client.cookie!.split('=')[1]!;
      const owner = (await gw.sql.query('SELECT password_hash FROM owners WHERE email = $1', ['new.owner@example.com'])).rows[0];
      expect(owner.password_hash).toMatch(/^\$2b\$04\$/);
      const sessions = (await gw.sql.query('SELECT token_hash FROM owner_sessions WHERE owner_id = $1', [res.json.id])).rows;
      expect(sessions).toHaveLength(1);
      expect(sessions[0].token_hash).not.toContain(token);
      expect((await client.get('/session')).json).toMatchObject({ email: 'new.owner@example.com', plan: 'free' });
    });

    it('refuses a taken email (409 email_taken), a bad email and a short password (400 bad_request)', async () => {
      const client = new DashboardClient(gw.url);
      expect((await client.signUp('ADA@example.com')).json).toMatchObject({ code: 'email_taken' });
      expect((await client.signUp('ADA@example.com')).status).toBe(409);
      const bad = await client.signUp('not-an-email');
      expect([bad.status, bad.json.code, bad.json.error]).toEqual([400, 'bad_request', expect.stringContaining('email')]);
      const short = await client.post('/session/sign-up', { email: 'short@example.com', password: 'short' });
      expect([short.status, short.json.error]).toEqual([400, expect.stringContaining('10 characters')]);
      expect(client.cookie).toBeNull();
    });

    it('signs in with passport-local (wrong password 401), signs out (session row gone, cookie dead)', async () => {
      const client = new DashboardClient(gw.url);
      const wrong = await client.post('/session/sign-in', { email: 'ada@example.com', password: 'wrong password!' });
      expect([wrong.status, wrong.json.code]).toEqual([401, 'unauthorized']);
      expect((await client.post('/session/sign-in', { email: 'nobody@example.com', password: 'whatever123' })).status).toBe(401);
      const ok = await client.post('/session/sign-in', { email: 'Ada@Example.com', password: 'correct horse battery' });
      expect([ok.status, ok.json.email]).toEqual([200, 'ada@example.com']);
      const cookie = client.cookie;
      expect((await client.get('/applications')).status).toBe(200);
      const before = Number((await gw.sql.query('SELECT count(*) FROM owner_sessions')).rows[0].count);
      expect((await client.post('/session/sign-out')).status).toBe(200);
      expect(Number((await gw.sql.query('SELECT count(*) FROM owner_sessions')).rows[0].count)).toBe(before - 1);
      client.cookie = cookie;
      const after = await client.get('/applications');
      expect([after.status, after.json.code]).toEqual([401, 'unauthorized']);
    });

    it('answers 401 without a session', async () => {
      const res = await new DashboardClient(gw.url).get('/session');
      expect([res.status, res.json.code]).toEqual([401, 'unauthorized']);
    });
  });

  describe('CSRF', () => {
    it('refuses a write without the Origin of PUBLIC_URL, or without X-Slipway-Csrf: 1 (403 forbidden, nothing written)', async () => {
      const count = async () => Number((await gw.sql.query('SELECT count(*) FROM applications')).rows[0].count);
      const before = await count();
      const noOrigin = await ada.request('POST', '/applications', { name: 'x' }, { 'x-slipway-csrf': '1' });
      const foreign = await ada.request('POST', '/applications', { name: 'x' }, { origin: 'https://evil.example', 'x-slipway-csrf': '1' });
      const noHeader = await ada.request('POST', '/applications', { name: 'x' }, { origin: DASHBOARD_ORIGIN });
      for (const res of [noOrigin, foreign, noHeader]) expect([res.status, res.json.code]).toEqual([403, 'forbidden']);
      expect(foreign.json.error).toContain('Origin');
      expect(noHeader.json.error).toContain('X-Slipway-Csrf');
      const signIn = await new DashboardClient(gw.url).request(
        'POST',
        '/session/sign-in',
        { email: 'ada@example.com', password: 'correct horse battery' },
        { origin: DASHBOARD_ORIGIN },
      );
      expect(signIn.status).toBe(403);
      expect(await count()).toBe(before);
    });
  });

  describe('applications', () => {
    it('creates with a unique slug and its address, lists only the owner’s own', async () => {
      const first = await ada.post('/applications', { name: 'Crème Brûlée' });
      const second = await ada.post('/applications', { name: 'creme brulee' });
      expect(first.json).toEqual({ id: expect.any(String), name: 'Crème Brûlée', slug: 'creme-brulee', url: 'http://creme-brulee.localhost:8080' });
      expect(second.json.slug).toBe('creme-brulee-2');
      const list = await ada.get('/applications');
      expect(list.json.applications.map((a: { slug: string }) => a.slug)).toEqual(['creme-brulee-2', 'creme-brulee', 'main-shop']);
      expect((await eve.get('/applications')).json.applications).toEqual([]);
      expect((await ada.post('/applications', { name: ' ' })).json).toMatchObject({ code: 'bad_request', error: expect.stringContaining('name') });
    });

    it('refuses a NUL in a name (400 bad_request naming the field; Postgres text cannot hold it) and stores nothing', async () => {
      const before = (await ada.get('/applications')).json.applications.length;
      const refused = await ada.post('/applications', { name: 'Shop\u0000' });
      expect([refused.status, refused.json.code, refused.json.error]).toEqual([
        400,
        'bad_request',
        expect.stringMatching(/^name: must not contain the NUL character \(U\+0000\)/),
      ]);
      expect((await ada.get('/applications')).json.applications).toHaveLength(before);
    });

    it('shows one application; another owner gets 404 for it and for everything under it', async () => {
      const res = await ada.get(`/applications/${appId}`);
      expect(res.json).toMatchObject({ id: appId, slug: 'main-shop', signInEnabled: false, hasDatabase: false, apiBaseUrl: 'http://localhost:3000/api/v1' });
      for (const path of ['', '/api-keys', '/domains', '/secrets', '/deployments', '/releases', '/database']) {
        const other = await eve.get(`/applications/${appId}${path}`);
        expect([path, other.status, other.json.code]).toEqual([path, 404, 'not_found']);
      }
      expect((await eve.post(`/applications/${appId}/api-keys`, { name: 'steal' })).status).toBe(404);
      expect((await ada.get('/applications/not-a-uuid')).status).toBe(404);
    });
  });

  describe('project API keys', () => {
    it('shows the full key once; the key deploys; rename, rotate (old key dead) and revoke', async () => {
      const created = await ada.post(`/applications/${appId}/api-keys`, { name: 'ci' });
      expect(created.status).toBe(201);
      expect(created.json).toEqual({
        id: expect.any(String),
        name: 'ci',
        prefix: expect.stringMatching(/^slw_key_\w{10}$/),
        key: expect.stringMatching(/^slw_key_\w{10}_\w{43}$/),
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
      });
      const key = created.json.key as string;
      const api = (k: string) => send(`${gw.url}/api/v1/secrets`, { headers: { authorization: `Bearer ${k}` } });
      expect((await api(key)).status).toBe(200);

      const list = await ada.get(`/applications/${appId}/api-keys`);
      expect(list.text).not.toContain(key);
      expect(list.json.keys[0]).toMatchObject({ id: created.json.id, prefix: created.json.prefix });
      expect((await gw.sql.query('SELECT key_hash FROM api_keys WHERE id = $1', [created.json.id])).rows[0].key_hash).not.toContain(key.slice(19));

      expect((await ada.patch(`/applications/${appId}/api-keys/${created.json.id}`, { name: 'deploys' })).json).toEqual({
        id: created.json.id,
        name: 'deploys',
      });
      const rotated = await ada.post(`/applications/${appId}/api-keys/${created.json.id}/rotate`);
      expect(rotated.json).toMatchObject({ name: 'deploys', replaces: created.json.id, key: expect.stringMatching(/^slw_key_/) });
      expect((await api(key)).status).toBe(401);
      expect((await api(rotated.json.key)).status).toBe(200);
      expect((await ada.delete(`/applications/${appId}/api-keys/${rotated.json.id}`)).json).toEqual({ id: rotated.json.id, revoked: true });
      expect((await api(rotated.json.key)).status).toBe(401);
      expect((await ada.delete(`/applications/${appId}/api-keys/${rotated.json.id}`)).status).toBe(404);
    });
  });

  describe('personal access tokens', () => {
    it('are the owner’s: created once-shown, listed without the token, rotated and revoked; invisible to others', async () => {
      const created = await ada.post('/tokens', { name: 'laptop' });
      expect(created.json).toMatchObject({
        name: 'laptop',
        prefix: expect.stringMatching(/^slw_pat_/),
        token: expect.stringMatching(/^slw_pat_\w{10}_\w{43}$/),
      });
      expect((await ada.get('/tokens')).text).not.toContain(created.json.token);
      expect((await eve.get('/tokens')).json.tokens).toEqual([]);
      expect((await eve.delete(`/tokens/${created.json.id}`)).status).toBe(404);
      expect((await ada.patch(`/tokens/${created.json.id}`, { name: 'work laptop' })).status).toBe(200);
      const rotated = await ada.post(`/tokens/${created.json.id}/rotate`);
      expect(rotated.json).toMatchObject({ name: 'work laptop', token: expect.stringMatching(/^slw_pat_/) });
      expect((await ada.delete(`/tokens/${rotated.json.id}`)).status).toBe(200);
      const rows = (await gw.sql.query('SELECT revoked_at FROM personal_access_tokens WHERE id = ANY($1)', [[created.json.id, rotated.json.id]])).rows;
      expect(rows.every((r: { revoked_at: Date | null }) => r.revoked_at !== null)).toBe(true);
    });

    it('keeps a token’s expiry across a rotation, and one owner cannot rotate, rename or list another’s', async () => {
      const created = await ada.post('/tokens', { name: 'expiring' });
      await gw.sql.query(`UPDATE personal_access_tokens SET expires_at = now() + interval '30 days' WHERE id = $1`, [created.json.id]);
      const expiresAt = (await gw.sql.query('SELECT expires_at FROM personal_access_tokens WHERE id = $1', [created.json.id])).rows[0].expires_at as Date;
      expect((await eve.post(`/tokens/${created.json.id}/rotate`)).status).toBe(404);
      expect((await eve.patch(`/tokens/${created.json.id}`, { name: 'mine now' })).status).toBe(404);
      const rotated = await ada.post(`/tokens/${created.json.id}/rotate`);
      expect(rotated.json).toMatchObject({ name: 'expiring', replaces: created.json.id, expiresAt: expiresAt.toISOString() });
      expect((await ada.post(`/tokens/${created.json.id}/rotate`)).status).toBe(404);
    });
  });

  describe('domains', () => {
    it('adds a domain as a pending claim; once its TXT record is verified it gets trusted origins (source custom_domain); refuses duplicates and platform hosts, removes both', async () => {
      const added = await ada.post(`/applications/${appId}/domains`, { hostname: 'Shop.Example.com.' });
      expect(added.json).toMatchObject({ hostname: 'shop.example.com', status: 'pending', trustedOrigins: [] });
      dns.setTxt(added.json.record.name, [added.json.record.value]);
      const verified = await ada.post(`/applications/${appId}/domains/${added.json.id}/verify`);
      expect(verified.json).toMatchObject({
        hostname: 'shop.example.com',
        status: 'verified',
        trustedOrigins: ['http://shop.example.com', 'https://shop.example.com'],
      });
      const origins = (await gw.sql.query('SELECT origin, source, domain_id FROM trusted_origins WHERE application_id = $1 ORDER BY origin', [appId])).rows;
      expect(origins).toEqual([
        { origin: 'http://shop.example.com', source: 'custom_domain', domain_id: added.json.id },
        { origin: 'https://shop.example.com', source: 'custom_domain', domain_id: added.json.id },
      ]);
      expect((await ada.get(`/applications/${appId}/domains`)).json.domains).toHaveLength(1);
      expect((await ada.post(`/applications/${appId}/domains`, { hostname: 'shop.example.com' })).json).toMatchObject({ code: 'domain_taken' });
      // Another application may claim it, but its claim cannot verify against the holder's record.
      const other = (await ada.post('/applications', { name: 'Other' })).json.id;
      const second = await ada.post(`/applications/${other}/domains`, { hostname: 'shop.example.com' });
      expect(second.json).toMatchObject({ status: 'pending' });
      expect((await ada.post(`/applications/${other}/domains/${second.json.id}/verify`)).json).toMatchObject({ code: 'domain_unverified' });
      expect((await ada.post(`/applications/${appId}/domains`, { hostname: 'x.localhost' })).json).toMatchObject({ code: 'bad_request' });
      expect((await ada.post(`/applications/${appId}/domains`, { hostname: 'https://a.com/x' })).status).toBe(400);
      expect((await ada.delete(`/applications/${appId}/domains/${added.json.id}`)).status).toBe(200);
      expect((await gw.sql.query('SELECT count(*) FROM trusted_origins WHERE application_id = $1', [appId])).rows[0].count).toBe('0');
    });
  });

  describe('secrets', () => {
    it('sets (encrypted, shared with /api/v1/secrets), lists names only, deletes', async () => {
      const put = await ada.put(`/applications/${appId}/secrets`, { secrets: { STRIPE_KEY: 'sk_live_very_secret' } });
      expect(put.json).toEqual({ names: ['STRIPE_KEY'] });
      const stored = (await gw.sql.query('SELECT value FROM secrets WHERE application_id = $1', [appId])).rows[0].value as Buffer;
      expect(stored.toString('latin1')).not.toContain('sk_live_very_secret');
      const list = await ada.get(`/applications/${appId}/secrets`);
      expect([list.json, list.text.includes('sk_live')]).toEqual([{ names: ['STRIPE_KEY'], secrets: [{ name: 'STRIPE_KEY', scopes: ['all'] }] }, false]);
      expect((await ada.put(`/applications/${appId}/secrets`, { secrets: { 'bad-name': 'x' } })).json).toMatchObject({
        code: 'bad_request',
        error: expect.stringContaining('^[A-Z_]'),
      });
      expect((await ada.delete(`/applications/${appId}/secrets/STRIPE_KEY`)).json).toEqual({ names: [] });
    });

    it('keeps a value per scope (sealed to its scope), deletes one scope or every one, and refuses an unknown scope', async () => {
      await ada.put(`/applications/${appId}/secrets`, { secrets: { API_URL: 'https://prod.example' } });
      expect((await ada.put(`/applications/${appId}/secrets?scope=preview`, { secrets: { API_URL: 'https://staging.example' } })).json).toEqual({
        names: ['API_URL'],
      });
      expect((await ada.get(`/applications/${appId}/secrets`)).json).toEqual({
        names: ['API_URL'],
        secrets: [{ name: 'API_URL', scopes: ['all', 'preview'] }],
      });
      // The contract's list is unchanged: each name once.
      const { rows } = await gw.sql.query(`SELECT scope, value FROM secrets WHERE application_id = $1 AND name = 'API_URL' ORDER BY scope`, [appId]);
      expect(rows.map((r) => r.scope)).toEqual(['all', 'preview']);
      const preview = rows[1].value as Buffer;
      // Bound to its scope: it does not open as the value for both (a row moved between scopes fails).
      expect(decryptEnvelopeToString(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), preview, envelopeBinding.secret(appId, 'API_URL', 'preview'))).toBe(
        'https://staging.example',
      );
      expect(() => decryptEnvelopeToString(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), preview, envelopeBinding.secret(appId, 'API_URL'))).toThrow();
      expect((await ada.put(`/applications/${appId}/secrets?scope=staging`, { secrets: { API_URL: 'x' } })).json).toMatchObject({
        code: 'bad_request',
        error: expect.stringContaining('scope'),
      });
      expect((await ada.delete(`/applications/${appId}/secrets/API_URL?scope=preview`)).json).toEqual({ names: ['API_URL'] });
      expect((await ada.get(`/applications/${appId}/secrets`)).json).toEqual({ names: ['API_URL'], secrets: [{ name: 'API_URL', scopes: ['all'] }] });
      await ada.put(`/applications/${appId}/secrets?scope=production`, { secrets: { API_URL: 'https://prod-only.example' } });
      expect((await ada.delete(`/applications/${appId}/secrets/API_URL`)).json).toEqual({ names: [] });
    });
  });

  describe('deployments and releases', () => {
    it('lists deployments with counts, shows one exactly as the API poll does, lists releases with the live one', async () => {
      const dep = (
        await gw.sql.query(
          `INSERT INTO deployments (application_id, status, warnings, hazards, spec, started_at, finished_at) VALUES ($1, 'succeeded', $2, '[]', '{"kind":"static"}', now(), now()) RETURNING id`,
          [appId, JSON.stringify([{ code: 'w', severity: 'warning', message: 'm', file: 'a.js' }])],
        )
      ).rows[0].id;
      const rel = (
        await gw.sql.query(`INSERT INTO releases (application_id, deployment_id, kind, artifact_key, spec) VALUES ($1, $2, 'static', 'k', '{}') RETURNING id`, [
          appId,
          dep,
        ])
      ).rows[0].id;
      await gw.sql.query('UPDATE applications SET live_release_id = $1 WHERE id = $2', [rel, appId]);
      const list = await ada.get(`/applications/${appId}/deployments`);
      expect(list.json.deployments[0]).toMatchObject({ id: dep, status: 'succeeded', warningCount: 1, hazardCount: 0 });
      const one = await ada.get(`/applications/${appId}/deployments/${dep}`);
      expect(one.json).toMatchObject({ taskId: dep, status: 'succeeded', spec: { kind: 'static' }, url: 'http://main-shop.localhost:8080' });
      expect((await eve.get(`/applications/${appId}/deployments/${dep}`)).status).toBe(404);
      expect((await ada.get(`/applications/${appId}/releases`)).json.releases).toEqual([
        { id: rel, deploymentId: dep, kind: 'static', createdAt: expect.any(String), sizeBytes: 0, deploymentStatus: 'succeeded', live: true, preview: null },
      ]);
    });
  });

  describe('database', () => {
    it('shows the allowance; reveals the connection string only when a database exists (POST, CSRF-checked)', async () => {
      const none = await ada.get(`/applications/${appId}/database`);
      expect(none.json).toEqual({ database: null, allowance: { plan: 'free', used: 0, allowed: 1 } });
      expect((await ada.post(`/applications/${appId}/database/connection-string`)).status).toBe(404);
      const owner = (await gw.sql.query('SELECT owner_id FROM applications WHERE id = $1', [appId])).rows[0].owner_id;
      const sealed = encryptEnvelope(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), 'p4ss', envelopeBinding.databasePassword(appId));
      await gw.sql.query(
        `INSERT INTO application_databases (application_id, owner_id, database_name, role_name, password) VALUES ($1, $2, 'app_main_shop', 'app_main_shop_role', $3)`,
        [appId, owner, sealed],
      );
      const some = await ada.get(`/applications/${appId}/database`);
      expect(some.json).toEqual({
        database: { name: 'app_main_shop', createdAt: expect.any(String), sizeBytes: null },
        allowance: { plan: 'free', used: 1, allowed: 1 },
      });
      expect(some.text).not.toContain('p4ss');
      expect((await ada.request('POST', `/applications/${appId}/database/connection-string`, {}, { origin: DASHBOARD_ORIGIN })).status).toBe(403);
      const revealed = await ada.post(`/applications/${appId}/database/connection-string`);
      const url = new URL(revealed.json.connectionString);
      expect([url.username, url.password, url.pathname, url.hostname]).toEqual(['app_main_shop_role', 'p4ss', '/app_main_shop', '127.0.0.1']);
      expect((await eve.post(`/applications/${appId}/database/connection-string`)).status).toBe(404);
    });
  });
});
