import { dropApplicationDatabase } from '@slipway/sign-in-core';
import { withDatabase } from '@slipway/platform-schema';
import { TEST_SERVER_URL } from '@slipway/testing';
import pg from 'pg';
import { DASHBOARD_ORIGIN, DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

/** The owner's user administration on the sign-in tab (Better Auth's admin plugin's ban, unban, revoke, role). */
describe('dashboard sign-in users: ban, unban, revoke sessions, set role (real HTTP, Postgres)', () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let appId: string;
  let ownerId: string;
  let tenant: pg.Client;

  beforeAll(async () => {
    gw = await startGateway('dash-sign-in-users', { BCRYPT_ROUNDS: '4' });
    ada = new DashboardClient(gw.url);
    await ada.signUp(`ada-${Date.now()}@example.com`);
    ownerId = (await ada.get('/session')).json.id;
    appId = (await ada.post('/applications', { name: 'Ban Shop' })).json.id;
    expect((await ada.post(`/applications/${appId}/sign-in`)).status).toBe(200);
    tenant = new pg.Client({ connectionString: withDatabase(TEST_SERVER_URL, `app_${appId.replace(/-/g, '')}`) });
    await tenant.connect();
    await tenant.query(
      `INSERT INTO service_auth.users (id, name, email) VALUES ('u1', 'Grace Hopper', 'grace@example.com'), ('u2', 'Alan Turing', 'alan@example.org')`,
    );
    await tenant.query(
      `INSERT INTO service_auth.sessions (id, token_hash, user_id, expires_at) VALUES ('s1', 'h1', 'u1', now() + interval '1 day'), ('s2', 'h2', 'u1', now() + interval '1 day'), ('s3', 'h3', 'u2', now() + interval '1 day')`,
    );
  });
  afterAll(async () => {
    await tenant?.end();
    if (appId) await dropApplicationDatabase(TEST_SERVER_URL, appId);
    await gw.close();
  });

  const sessionsOf = async (userId: string) =>
    (await tenant.query('SELECT id FROM service_auth.sessions WHERE user_id = $1 ORDER BY id', [userId])).rows.map((r) => r.id);
  const audit = async (userId: string) =>
    (await tenant.query('SELECT actor_user_id, action, details FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at', [userId])).rows;

  it('shows role and ban in the list; a ban ends the user’s sessions; unban, role and revoke; each with an audit row naming the owner', async () => {
    const listed = await ada.get(`/applications/${appId}/sign-in/users?search=grace`);
    expect(listed.json.users).toEqual([
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
    ]);

    const ban = await ada.post(`/applications/${appId}/sign-in/users/u1/ban`, { banReason: 'chargebacks', banExpiresIn: 3600 });
    expect(ban.status).toBe(200);
    expect(ban.json.user).toMatchObject({ id: 'u1', banned: true, banReason: 'chargebacks' });
    expect(new Date(ban.json.user.banExpires).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect(await sessionsOf('u1')).toEqual([]);
    expect(await sessionsOf('u2')).toEqual(['s3']);
    expect((await ada.get(`/applications/${appId}/sign-in/users?search=grace`)).json.users[0]).toMatchObject({ banned: true, banReason: 'chargebacks' });

    expect((await ada.post(`/applications/${appId}/sign-in/users/u1/unban`)).json.user).toMatchObject({ banned: false, banReason: null, banExpires: null });
    expect((await ada.post(`/applications/${appId}/sign-in/users/u1/role`, { role: 'admin' })).json.user).toMatchObject({ role: 'admin' });
    expect((await ada.post(`/applications/${appId}/sign-in/users/u1/role`, { role: ['user', 'admin'] })).json.user).toMatchObject({ role: 'user,admin' });
    expect((await ada.post(`/applications/${appId}/sign-in/users/u1/role`, { role: 'root' })).status).toBe(400);
    expect((await ada.post(`/applications/${appId}/sign-in/users/u1/ban`, { banExpiresIn: -5 })).status).toBe(400);
    expect((await ada.post(`/applications/${appId}/sign-in/users/u2/revoke-sessions`)).status).toBe(200);
    expect(await sessionsOf('u2')).toEqual([]);

    const trail = await audit('u1');
    expect(trail.map((r) => r.action)).toEqual(['ban', 'unban', 'set-role', 'set-role']);
    expect(trail.every((r) => r.actor_user_id === `owner:${ownerId}`)).toBe(true);
    expect(trail[0].details).toMatchObject({ reason: 'chargebacks', sessionsEnded: 2 });
    expect(await audit('u2')).toEqual([{ actor_user_id: `owner:${ownerId}`, action: 'revoke-sessions', details: { sessionsEnded: 1 } }]);
  });

  it('unknown users and actions are 404; another owner gets 404; writes are CSRF-checked', async () => {
    expect((await ada.post(`/applications/${appId}/sign-in/users/nobody/ban`, {})).status).toBe(404);
    expect((await ada.post(`/applications/${appId}/sign-in/users/u2/delete`, {})).status).toBe(404);
    const eve = new DashboardClient(gw.url);
    await eve.signUp(`eve-${Date.now()}@example.com`);
    expect((await eve.post(`/applications/${appId}/sign-in/users/u2/ban`, {})).status).toBe(404);
    expect((await ada.request('POST', `/applications/${appId}/sign-in/users/u2/ban`, {}, { origin: DASHBOARD_ORIGIN })).status).toBe(403);
    expect((await tenant.query(`SELECT banned FROM service_auth.users WHERE id = 'u2'`)).rows[0].banned).toBe(false);
  });
});
