import { dropApplicationDatabase } from '@slipway/sign-in-core';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { withDatabase } from '@slipway/platform-schema';
import { TEST_SERVER_URL } from '@slipway/testing';
import pg from 'pg';
import { DASHBOARD_ORIGIN, DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

describe('dashboard sign-in tab API (real HTTP, Postgres)', () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let appId: string;

  beforeAll(async () => {
    gw = await startGateway('dash-sign-in', { BCRYPT_ROUNDS: '4' });
    ada = new DashboardClient(gw.url);
    await ada.signUp(`ada-${Date.now()}@example.com`);
    appId = (await ada.post('/applications', { name: 'Tab Shop' })).json.id;
  });
  afterAll(async () => {
    if (appId) await dropApplicationDatabase(TEST_SERVER_URL, appId);
    await gw.close();
  });

  it('switches on, reveals the env by POST, shows users (searchable), settings and the outbox; secrets stay sealed', async () => {
    expect((await ada.get(`/applications/${appId}/sign-in`)).json).toEqual({ enabled: false, service: null });
    expect((await ada.get(`/applications/${appId}/sign-in/users`)).status).toBe(404);
    const on = await ada.post(`/applications/${appId}/sign-in`);
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, service: { applicationId: appId, baseUrl: expect.stringMatching(/\/a\/tab-shop$/), socialProviders: {} } });
    expect((await ada.post(`/applications/${appId}/sign-in`)).json.service.createdAt).toBe(on.json.service.createdAt);
    const env = await ada.post(`/applications/${appId}/sign-in/env`);
    expect(env.json.env).toMatch(/^SERVICE_AUTH_BASE_URL=.*\nSERVICE_AUTH_COOKIE_SECRET=[\w-]+\nSERVICE_AUTH_JWKS_URL=.*\nVITE_SERVICE_AUTH_URL=.*\n$/);

    // Users live in the application's own database.
    const tenant = new pg.Client({ connectionString: withDatabase(TEST_SERVER_URL, `app_${appId.replace(/-/g, '')}`) });
    await tenant.connect();
    await tenant.query(
      `INSERT INTO service_auth.users (id, name, email) VALUES ('u1', 'Grace Hopper', 'grace@example.com'), ('u2', 'Alan Turing', 'alan@example.org')`,
    );
    await tenant.end();
    const all = await ada.get(`/applications/${appId}/sign-in/users`);
    expect(all.json.total).toBe(2);
    const found = await ada.get(`/applications/${appId}/sign-in/users?search=HOPPER`);
    expect(found.json).toEqual({
      total: 1,
      users: [
        {
          id: 'u1',
          email: 'grace@example.com',
          name: 'Grace Hopper',
          emailVerified: false,
          createdAt: expect.any(String),
          role: 'user',
          banned: false,
          banReason: null,
          banExpires: null,
        },
      ],
    });
    expect((await ada.get(`/applications/${appId}/sign-in/users?search=%25`)).json.total).toBe(0);

    const updated = await ada.patch(`/applications/${appId}/sign-in/settings`, {
      requireEmailVerification: true,
      allowLocalhost: false,
      socialProviders: { github: { clientId: 'gh-client', clientSecret: 'gh-very-secret' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.json.service.settings).toMatchObject({ requireEmailVerification: true, allowLocalhost: false, socialProviders: ['github'] });
    expect(updated.json.service.socialProviders).toEqual({ github: { clientId: 'gh-client', callbackUrl: `${on.json.service.baseUrl}/callback/github` } });
    expect(updated.text).not.toContain('gh-very-secret');
    const stored = (await gw.sql.query('SELECT settings FROM sign_in_services WHERE application_id = $1', [appId])).rows[0].settings;
    expect(JSON.stringify(stored)).not.toContain('gh-very-secret');
    const sealed = Buffer.from(stored.socialProviders.github.clientSecret, 'base64');
    expect(decryptEnvelopeToString(keyringFromMasterKey(gw.config.SLIPWAY_MASTER_KEY), sealed, envelopeBinding.oauthClientSecret(appId, 'github'))).toBe(
      'gh-very-secret',
    );
    expect((await ada.patch(`/applications/${appId}/sign-in/settings`, { socialProviders: { github: null } })).json.service.socialProviders).toEqual({});
    expect((await ada.patch(`/applications/${appId}/sign-in/settings`, { socialProviders: { twitter: { clientId: 'x', clientSecret: 'y' } } })).json.code).toBe(
      'bad_request',
    );

    await gw.sql.query(
      `INSERT INTO emails (application_id, kind, to_address, subject, text_body) VALUES ($1, 'verification', 'grace@example.com', 'Verify your email', 'Open http://x/verify')`,
      [appId],
    );
    expect((await ada.get(`/applications/${appId}/sign-in/emails`)).json.emails).toEqual([
      expect.objectContaining({ kind: 'verification', toAddress: 'grace@example.com', subject: 'Verify your email', status: 'outbox' }),
    ]);
  });

  it('is the owner’s only, and writes are CSRF-checked', async () => {
    const eve = new DashboardClient(gw.url);
    await eve.signUp(`eve-${Date.now()}@example.com`);
    expect((await eve.get(`/applications/${appId}/sign-in`)).status).toBe(404);
    expect((await eve.post(`/applications/${appId}/sign-in/env`)).status).toBe(404);
    expect((await ada.request('POST', `/applications/${appId}/sign-in/env`, {}, { origin: DASHBOARD_ORIGIN })).status).toBe(403);
  });
});
