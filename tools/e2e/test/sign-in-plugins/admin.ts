import { adminClient } from 'better-auth/client/plugins';
import type { SharedContext } from './context.js';
import { pluginClient, type PluginsContext } from './context.js';

const PASSWORD = 'a long passphrase';

/** POSTs one of the owner's user actions (`ban`, `unban`, `revoke-sessions`, `role`) with the application's API key. */
async function ownerAction(ctx: PluginsContext, userId: string, action: string, body: object = {}) {
  const res = await fetch(
    `http://127.0.0.1:${ctx.platform.ports.gateway}/dashboard/api/applications/${ctx.account.applicationId}/sign-in/users/${userId}/${action}`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
  );
  return { status: res.status, json: (await res.json()) as any };
}

/** Better Auth's admin plugin through the platform: a ban ends the user's session at once, from the admin's client or the owner's API. */
export function adminTests(shared: SharedContext) {
  it('admin: a non-admin is refused; the owner makes an admin; a ban (admin’s or owner’s) ends the user’s session at once and sign-in answers 403 BANNED_USER', async () => {
    const ctx = shared.current;
    await ctx.settings({ plugins: { admin: { enabled: true } } });
    const boss = pluginClient(ctx, [adminClient()], '198.51.100.71');
    const victim = pluginClient(ctx, [adminClient()], '198.51.100.72');
    const bossUp = await boss.client.signUp.email({ email: 'admin-boss@example.com', password: PASSWORD, name: 'Boss' });
    const victimUp = await victim.client.signUp.email({ email: 'admin-victim@example.com', password: PASSWORD, name: 'Victim' });
    expect(bossUp.error).toBeNull();
    expect(victimUp.error).toBeNull();
    const victimId = victimUp.data!.user.id;

    // Not an admin yet: every admin route is refused.
    expect((await boss.client.admin.listUsers({ query: {} })).error).toMatchObject({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS' });
    expect((await boss.client.admin.banUser({ userId: victimId })).error).toMatchObject({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS' });

    const promoted = await ownerAction(ctx, bossUp.data!.user.id, 'role', { role: 'admin' });
    expect(promoted).toMatchObject({ status: 200, json: { user: { role: 'admin' } } });
    const listed = await boss.client.admin.listUsers({ query: { searchValue: 'admin-victim' } });
    expect(listed.data?.users.map((u) => u.id)).toEqual([victimId]);

    // The admin's ban: the victim's (cached) session is gone on the very next read.
    expect((await victim.client.getSession()).data?.user.id).toBe(victimId);
    expect((await victim.client.getSession()).data?.user.id).toBe(victimId);
    expect((await boss.client.admin.banUser({ userId: victimId, banReason: 'abuse' })).error).toBeNull();
    expect((await victim.client.getSession()).data).toBeNull();
    expect((await victim.client.signIn.email({ email: 'admin-victim@example.com', password: PASSWORD })).error).toMatchObject({
      status: 403,
      code: 'BANNED_USER',
    });

    // The owner's ban through the owners' API: the sign-in service's cache drops the session within a short poll.
    expect((await ownerAction(ctx, victimId, 'unban')).json.user).toMatchObject({ banned: false });
    expect((await victim.client.signIn.email({ email: 'admin-victim@example.com', password: PASSWORD })).error).toBeNull();
    expect((await victim.client.getSession()).data?.user.id).toBe(victimId);
    expect((await victim.client.getSession()).data?.user.id).toBe(victimId);
    expect((await ownerAction(ctx, victimId, 'ban', { banReason: 'owner decided', banExpiresIn: 3600 })).json.user).toMatchObject({
      banned: true,
      banReason: 'owner decided',
    });
    const deadline = Date.now() + 5000;
    let session = (await victim.client.getSession()).data;
    while (session && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      session = (await victim.client.getSession()).data;
    }
    expect(session).toBeNull();
    expect((await victim.client.signIn.email({ email: 'admin-victim@example.com', password: PASSWORD })).error).toMatchObject({
      status: 403,
      code: 'BANNED_USER',
    });

    const trail = await ctx.tenantQuery('SELECT actor_user_id, action FROM service_auth.admin_audit WHERE target_user_id = $1 ORDER BY created_at', [victimId]);
    expect(trail).toEqual([
      { actor_user_id: bossUp.data!.user.id, action: 'ban' },
      { actor_user_id: `owner:${ctx.account.ownerId}`, action: 'unban' },
      { actor_user_id: `owner:${ctx.account.ownerId}`, action: 'ban' },
    ]);
    await ctx.settings({ plugins: { admin: { enabled: false } } });
    expect((await boss.client.admin.listUsers({ query: {} })).error).toMatchObject({ status: 404 });
  });
}
