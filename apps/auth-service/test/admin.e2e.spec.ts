import { createAuthClient } from 'better-auth/client';
import { adminClient } from 'better-auth/client/plugins';
import { banUser } from '@slipway/sign-in-core';
import { withDatabase } from '@slipway/platform-schema';
import { TEST_SERVER_URL } from '@slipway/testing';
import pg from 'pg';
import { browserLikeFetch, startAuthHarness, originOf, type AuthHarness } from './harness.js';

const PASSWORD = 'correct horse battery';

/** Better Auth's client with the admin plugin, in a browser stand-in (cookie jar, the app's Origin). */
function adminBrowser(authUrl: string, origin: string) {
  const { impl, jar } = browserLikeFetch(origin);
  const client = createAuthClient({ baseURL: authUrl, plugins: [adminClient()], fetchOptions: { customFetchImpl: impl } });
  return { client, jar };
}

describe('admin plugin (Better Auth’s adminClient) against the service', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let other: { applicationId: string; authUrl: string };
  let off: { applicationId: string; authUrl: string };
  let db: pg.Pool;
  let otherDb: pg.Pool;
  const tenantPool = (appId: string) => new pg.Pool({ connectionString: withDatabase(TEST_SERVER_URL, `app_${appId.replace(/-/g, '')}`), max: 2 });
  const on = { plugins: { admin: { enabled: true } } };

  /** A user signed up through the client; `role` set in the database as an operator would. */
  async function user(tenant: { authUrl: string }, slug: string, email: string, role?: string) {
    const b = adminBrowser(tenant.authUrl, originOf(slug));
    const up = await b.client.signUp.email({ email, password: PASSWORD, name: email.split('@')[0]! });
    expect(up.error).toBeNull();
    if (role) await (tenant === other ? otherDb : db).query('UPDATE service_auth.users SET role = $2 WHERE email = $1', [email, role]);
    return { ...b, id: up.data!.user.id };
  }

  beforeAll(async () => {
    h = await startAuthHarness('authadmin');
    shop = await h.createTenant('adminshop', { settings: on });
    other = await h.createTenant('othershop', { settings: on });
    off = await h.createTenant('offshop');
    db = tenantPool(shop.applicationId);
    otherDb = tenantPool(other.applicationId);
  });
  afterAll(async () => {
    await db?.end();
    await otherDb?.end();
    await h?.close();
  });

  it('lists and searches users, reads one, creates one, sets a role (rows in service_auth)', async () => {
    const admin = await user(shop, 'adminshop', 'boss@example.com', 'admin');
    await user(shop, 'adminshop', 'alice@example.com');
    await user(shop, 'adminshop', 'bob@example.org');
    const all = await admin.client.admin.listUsers({ query: { limit: 10 } });
    expect(all.error).toBeNull();
    expect(all.data).toMatchObject({ total: 3, limit: 10 });
    const found = await admin.client.admin.listUsers({ query: { searchValue: 'ALICE', searchField: 'email', searchOperator: 'contains' } });
    expect(found.data?.users.map((u) => u.email)).toEqual(['alice@example.com']);
    const ending = await admin.client.admin.listUsers({ query: { searchValue: '.org', searchOperator: 'ends_with', sortBy: 'email', sortDirection: 'desc' } });
    expect(ending.data).toMatchObject({ total: 1, users: [{ email: 'bob@example.org' }] });
    const admins = await admin.client.admin.listUsers({ query: { filterField: 'role', filterValue: 'admin', filterOperator: 'eq' } });
    expect(admins.data?.users.map((u) => u.email)).toEqual(['boss@example.com']);
    const paged = await admin.client.admin.listUsers({ query: { limit: 1, offset: 1, sortBy: 'email' } });
    expect(paged.data).toMatchObject({ total: 3, users: [{ email: 'bob@example.org' }], limit: 1, offset: 1 });
    // An unknown field: Better Auth's adapter refuses it and list-users answers an empty list.
    expect((await admin.client.admin.listUsers({ query: { sortBy: 'password' } })).data).toEqual({ users: [], total: 0 });

    const created = await admin.client.admin.createUser({ email: 'Carol@Example.com', password: 'carol password!', name: 'Carol', role: 'user' });
    expect(created.error).toBeNull();
    expect(created.data?.user).toMatchObject({ email: 'carol@example.com', role: 'user', banned: false });
    const dup = await admin.client.admin.createUser({ email: 'carol@example.com', password: 'carol password!', name: 'Carol' });
    expect(dup.error).toMatchObject({ status: 400, code: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL' });
    const bogusRole = await admin.client.admin.createUser({ email: 'dan@example.com', name: 'Dan', role: 'superuser' as 'user' });
    expect(bogusRole.error).toMatchObject({ status: 400, code: 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE' });
    const carol = adminBrowser(shop.authUrl, originOf('adminshop'));
    expect((await carol.client.signIn.email({ email: 'carol@example.com', password: 'carol password!' })).error).toBeNull();

    const got = await admin.client.admin.getUser({ query: { id: created.data!.user.id } });
    expect(got.data).toMatchObject({ id: created.data!.user.id, email: 'carol@example.com' });
    expect((await admin.client.admin.getUser({ query: { id: 'nobody' } })).error).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });

    const promoted = await admin.client.admin.setRole({ userId: created.data!.user.id, role: ['user', 'admin'] });
    expect(promoted.data?.user).toMatchObject({ role: 'user,admin' });
    // Carol's cached session sees her new role at once.
    expect((await carol.client.getSession()).data?.user).toMatchObject({ role: 'user,admin' });
    const updated = await admin.client.admin.updateUser({ userId: created.data!.user.id, data: { name: 'Carol B', role: 'user' } });
    expect(updated.data).toMatchObject({ name: 'Carol B', role: 'user' });
    expect((await admin.client.admin.updateUser({ userId: created.data!.user.id, data: { password: 'x' } })).error).toMatchObject({
      code: 'PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER',
    });

    const audit = await db.query(
      `SELECT actor_user_id, action, target_user_id, details FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at`,
      [created.data!.user.id],
    );
    expect(audit.rows.map((r) => r.action)).toEqual(['create-user', 'set-role', 'update-user']);
    expect(audit.rows[1]).toMatchObject({ actor_user_id: admin.id, details: { from: 'user', to: 'user,admin' } });
  });

  it('a ban ends the user’s sessions at once, refuses sign-in with 403 BANNED_USER; unban lets them back; an expired ban lifts itself', async () => {
    const admin = await user(shop, 'adminshop', 'banner@example.com', 'admin');
    const victim = await user(shop, 'adminshop', 'victim@example.com');
    // The NOTIFY triggers off: only the service's own invalidation (before it answers) can end the cached session.
    await db.query('ALTER TABLE service_auth.users DISABLE TRIGGER USER; ALTER TABLE service_auth.sessions DISABLE TRIGGER USER');
    try {
      for (let i = 0; i < 3; i++) expect((await victim.client.getSession()).data?.user.email).toBe('victim@example.com'); // now in the session cache
      const ban = await admin.client.admin.banUser({ userId: victim.id, banReason: 'spam' });
      expect(ban.error).toBeNull();
      expect(ban.data?.user).toMatchObject({ banned: true, banReason: 'spam', banExpires: null });
      expect((await victim.client.getSession()).data).toBeNull();
    } finally {
      await db.query('ALTER TABLE service_auth.users ENABLE TRIGGER USER; ALTER TABLE service_auth.sessions ENABLE TRIGGER USER');
    }
    expect((await db.query('SELECT count(*)::int AS n FROM service_auth.sessions WHERE user_id = $1', [victim.id])).rows[0].n).toBe(0);
    const refused = await victim.client.signIn.email({ email: 'victim@example.com', password: PASSWORD });
    expect(refused.error).toMatchObject({ status: 403, code: 'BANNED_USER', message: expect.stringMatching(/^You have been banned from this application/) });
    expect((await victim.client.signIn.email({ email: 'victim@example.com', password: 'wrong password' })).error).toMatchObject({ status: 401 });
    expect((await admin.client.admin.banUser({ userId: admin.id })).error).toMatchObject({ status: 400, code: 'YOU_CANNOT_BAN_YOURSELF' });

    // Belt and braces: a session row that survives a ban (written behind the service's back) is no session.
    await db.query('UPDATE service_auth.users SET banned = false WHERE id = $1', [victim.id]);
    const sneaky = adminBrowser(shop.authUrl, originOf('adminshop'));
    expect((await sneaky.client.signIn.email({ email: 'victim@example.com', password: PASSWORD })).error).toBeNull();
    await db.query('UPDATE service_auth.users SET banned = true WHERE id = $1', [victim.id]);
    expect((await sneaky.client.getSession()).data).toBeNull();

    const unban = await admin.client.admin.unbanUser({ userId: victim.id });
    expect(unban.data?.user).toMatchObject({ banned: false, banReason: null });
    expect((await victim.client.signIn.email({ email: 'victim@example.com', password: PASSWORD })).error).toBeNull();

    const timed = await admin.client.admin.banUser({ userId: victim.id, banReason: 'cool off', banExpiresIn: 60 });
    expect(new Date(timed.data!.user.banExpires!).getTime()).toBeGreaterThan(Date.now());
    expect((await victim.client.signIn.email({ email: 'victim@example.com', password: PASSWORD })).error).toMatchObject({ status: 403, code: 'BANNED_USER' });
    await db.query(`UPDATE service_auth.users SET ban_expires = now() - interval '1 second' WHERE id = $1`, [victim.id]);
    expect((await victim.client.signIn.email({ email: 'victim@example.com', password: PASSWORD })).error).toBeNull();
    expect((await db.query('SELECT banned, ban_reason, ban_expires FROM service_auth.users WHERE id = $1', [victim.id])).rows[0]).toEqual({
      banned: false,
      ban_reason: null,
      ban_expires: null,
    });

    const actions = (await db.query(`SELECT action, details FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at`, [victim.id])).rows;
    expect(actions.map((r) => r.action)).toEqual(['ban', 'unban', 'ban']);
    expect(actions[0].details).toMatchObject({ reason: 'spam', sessionsEnded: 1 });
  });

  it('a ban written straight to the tenant database (as the owners’ dashboard does) ends a cached session within a short poll', async () => {
    const victim = await user(shop, 'adminshop', 'owner-banned@example.com');
    expect((await victim.client.getSession()).data).not.toBeNull();
    expect((await victim.client.getSession()).data).not.toBeNull(); // served from the cache
    const gatewayLike = new pg.Client({ connectionString: withDatabase(TEST_SERVER_URL, `app_${shop.applicationId.replace(/-/g, '')}`) });
    await gatewayLike.connect();
    try {
      expect(await banUser(gatewayLike, victim.id, { reason: 'owner says no', expiresAt: null }, { actor: 'owner:o1', ip: '203.0.113.9' })).toEqual({
        sessionsOf: [victim.id],
      });
    } finally {
      await gatewayLike.end();
    }
    const deadline = Date.now() + 5000;
    let session = (await victim.client.getSession()).data;
    while (session && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      session = (await victim.client.getSession()).data;
    }
    expect(session).toBeNull();
    expect((await db.query(`SELECT actor_user_id, ip_address FROM service_auth.admin_audit WHERE target_user_id = $1`, [victim.id])).rows).toEqual([
      { actor_user_id: 'owner:o1', ip_address: '203.0.113.9' },
    ]);
  });

  it('lists and revokes a user’s sessions, sets a password, removes a user', async () => {
    const admin = await user(shop, 'adminshop', 'ops@example.com', 'admin');
    const target = await user(shop, 'adminshop', 'target@example.com');
    const second = adminBrowser(shop.authUrl, originOf('adminshop'));
    await second.client.signIn.email({ email: 'target@example.com', password: PASSWORD });
    const sessions = await admin.client.admin.listUserSessions({ userId: target.id });
    expect(sessions.data?.sessions).toHaveLength(2);
    expect((await admin.client.admin.revokeUserSession({ sessionToken: sessions.data!.sessions[0]!.token })).data).toEqual({ success: true });
    expect((await target.client.getSession()).data).toBeNull();
    expect((await second.client.getSession()).data).not.toBeNull();
    expect((await admin.client.admin.revokeUserSessions({ userId: target.id })).data).toEqual({ success: true });
    expect((await second.client.getSession()).data).toBeNull();

    expect((await admin.client.admin.setUserPassword({ userId: target.id, newPassword: 'a brand new password' })).data).toEqual({ status: true });
    expect((await target.client.signIn.email({ email: 'target@example.com', password: PASSWORD })).error).toMatchObject({ status: 401 });
    expect((await target.client.signIn.email({ email: 'target@example.com', password: 'a brand new password' })).error).toBeNull();
    expect((await admin.client.admin.setUserPassword({ userId: target.id, newPassword: 'short' })).error).toMatchObject({
      status: 400,
      code: 'PASSWORD_TOO_SHORT',
    });

    expect((await admin.client.admin.removeUser({ userId: admin.id })).error).toMatchObject({ status: 400, code: 'YOU_CANNOT_REMOVE_YOURSELF' });
    expect((await admin.client.admin.removeUser({ userId: target.id })).data).toEqual({ success: true });
    expect((await target.client.getSession()).data).toBeNull();
    expect((await db.query('SELECT count(*)::int AS n FROM service_auth.users WHERE id = $1', [target.id])).rows[0].n).toBe(0);
    const actions = (await db.query(`SELECT action FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at`, [target.id])).rows.map(
      (r) => r.action,
    );
    expect(actions).toEqual(['revoke-session', 'revoke-sessions', 'set-password', 'remove']);
    expect((await admin.client.admin.hasPermission({ permissions: { user: ['ban'] } })).data).toEqual({ error: null, success: true });
    expect((await admin.client.admin.hasPermission({ permissions: { user: ['impersonate-admins'] } })).data).toEqual({ error: null, success: false });
  });

  it('impersonates a user for an hour and stops, restoring the admin’s session, with audit rows; admins cannot be impersonated', async () => {
    const admin = await user(shop, 'adminshop', 'imp-admin@example.com', 'admin');
    const peer = await user(shop, 'adminshop', 'imp-peer@example.com', 'admin');
    const target = await user(shop, 'adminshop', 'imp-target@example.com');
    const adminToken = (await admin.client.getSession()).data!.session.token;

    expect((await admin.client.admin.impersonateUser({ userId: peer.id })).error).toMatchObject({ status: 403, code: 'YOU_CANNOT_IMPERSONATE_ADMINS' });
    const imp = await admin.client.admin.impersonateUser({ userId: target.id });
    expect(imp.error).toBeNull();
    expect(imp.data?.session).toMatchObject({ userId: target.id, impersonatedBy: admin.id });
    expect(new Date(imp.data!.session.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(admin.jar.has('__Secure-slipway.admin_session')).toBe(true);
    const as = await admin.client.getSession();
    expect(as.data).toMatchObject({ user: { id: target.id }, session: { impersonatedBy: admin.id } });
    // The user's own list-sessions does not show the admin's impersonation session (Better Auth's hook).
    expect(((await target.client.listSessions()).data as { impersonatedBy?: string | null }[] | null)?.every((s) => !s.impersonatedBy)).toBe(true);

    // A forged admin cookie (someone else's token, wrong signature) restores nothing.
    const forged = admin.jar.get('__Secure-slipway.admin_session')!;
    admin.jar.set('__Secure-slipway.admin_session', encodeURIComponent(`${(await target.client.getSession()).data!.session.token}:.AAAA`));
    expect((await admin.client.admin.stopImpersonating()).error).toMatchObject({ status: 500 });
    admin.jar.set('__Secure-slipway.admin_session', forged);

    const stop = await admin.client.admin.stopImpersonating();
    expect(stop.error).toBeNull();
    expect(stop.data).toMatchObject({ user: { id: admin.id }, session: { token: adminToken } });
    expect((await admin.client.getSession()).data?.user.id).toBe(admin.id);
    expect(admin.jar.has('__Secure-slipway.admin_session')).toBe(false);
    expect((await db.query('SELECT count(*)::int AS n FROM service_auth.sessions WHERE impersonated_by = $1', [admin.id])).rows[0].n).toBe(0);
    expect((await admin.client.admin.stopImpersonating()).error).toMatchObject({ status: 400 });
    const audit = (await db.query(`SELECT actor_user_id, action FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at`, [target.id]))
      .rows;
    expect(audit).toEqual([
      { actor_user_id: admin.id, action: 'impersonate' },
      { actor_user_id: admin.id, action: 'stop-impersonating' },
    ]);

    // Banning an admin also ends the impersonation sessions they hold.
    await admin.client.admin.impersonateUser({ userId: target.id });
    expect((await peer.client.admin.banUser({ userId: admin.id })).error).toBeNull();
    expect((await admin.client.getSession()).data).toBeNull();
  });

  it('a non-admin gets 403 on every admin route, a visitor 401', async () => {
    const plain = await user(shop, 'adminshop', 'plain@example.com');
    const { client } = plain;
    const expectations: [Promise<{ error: unknown }>, string][] = [
      [client.admin.listUsers({ query: {} }), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS'],
      [client.admin.getUser({ query: { id: plain.id } }), 'YOU_ARE_NOT_ALLOWED_TO_GET_USER'],
      [client.admin.createUser({ email: 'x@example.com', name: 'X', password: 'long enough pw' }), 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS'],
      [client.admin.updateUser({ userId: plain.id, data: { role: 'admin' } }), 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS'],
      [client.admin.setRole({ userId: plain.id, role: 'admin' }), 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE'],
      [client.admin.banUser({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS'],
      [client.admin.unbanUser({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS'],
      [client.admin.listUserSessions({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS'],
      [client.admin.revokeUserSession({ sessionToken: 'x' }), 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS'],
      [client.admin.revokeUserSessions({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS'],
      [client.admin.impersonateUser({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS'],
      [client.admin.removeUser({ userId: plain.id }), 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS'],
      [client.admin.setUserPassword({ userId: plain.id, newPassword: 'long enough pw' }), 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD'],
    ];
    for (const [call, code] of expectations) expect((await call).error).toMatchObject({ status: 403, code });
    expect((await client.admin.hasPermission({ permissions: { user: ['list'] } })).data).toEqual({ error: null, success: false });
    expect((await client.admin.stopImpersonating()).error).toMatchObject({ status: 400 });
    expect((await db.query('SELECT role, banned FROM service_auth.users WHERE id = $1', [plain.id])).rows[0]).toEqual({ role: 'user', banned: false });

    const visitor = adminBrowser(shop.authUrl, originOf('adminshop'));
    expect((await visitor.client.admin.listUsers({ query: {} })).error).toMatchObject({ status: 401 });
    expect((await visitor.client.admin.banUser({ userId: plain.id })).error).toMatchObject({ status: 401 });
  });

  it('an admin of another application cannot reach this one’s users; the plugin off answers 404', async () => {
    const victim = await user(shop, 'adminshop', 'cross-victim@example.com');
    const foreign = await user(other, 'othershop', 'foreign-admin@example.com', 'admin');
    expect((await foreign.client.admin.banUser({ userId: victim.id })).error).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    expect((await foreign.client.admin.getUser({ query: { id: victim.id } })).error).toMatchObject({ status: 404 });
    expect((await foreign.client.admin.setRole({ userId: victim.id, role: 'admin' })).error).toMatchObject({ status: 404 });
    expect((await foreign.client.admin.revokeUserSessions({ userId: victim.id })).error).toMatchObject({ status: 404 });
    expect((await foreign.client.admin.impersonateUser({ userId: victim.id })).error).toMatchObject({ status: 404 });
    expect((await foreign.client.admin.removeUser({ userId: victim.id })).error).toMatchObject({ status: 404 });
    expect((await foreign.client.admin.listUsers({ query: { searchValue: 'cross-victim' } })).data).toMatchObject({ total: 0 });
    expect((await victim.client.getSession()).data?.user).toMatchObject({ banned: false, role: 'user' });
    // The other application's admin cookie sent here is not a session here either.
    const stolen = adminBrowser(shop.authUrl, originOf('adminshop'));
    for (const [k, v] of foreign.jar) stolen.jar.set(k, v);
    expect((await stolen.client.admin.listUsers({ query: {} })).error).toMatchObject({ status: 401 });

    const offAdmin = await user(off, 'offshop', 'off-admin@example.com');
    for (const call of [
      offAdmin.client.admin.listUsers({ query: {} }),
      offAdmin.client.admin.banUser({ userId: offAdmin.id }),
      offAdmin.client.admin.stopImpersonating(),
    ]) {
      expect((await call).error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
  });
});
