import { pluginClient, type SharedContext } from './context.js';

/** The owners' switches: every plugin off until switched on; an off plugin's routes are unknown paths. */
export function switchTests(shared: SharedContext) {
  it('lists every plugin off at first, switches one on and off through the owners’ API, and an off plugin’s route answers 404', async () => {
    const ctx = shared.current;
    const gateway = `http://127.0.0.1:${ctx.platform.ports.gateway}`;
    const read = async () =>
      (await (
        await fetch(`${gateway}/dashboard/api/applications/${ctx.account.applicationId}/sign-in`, {
          headers: { authorization: `Bearer ${ctx.account.apiKey}` },
        })
      ).json()) as any;
    expect((await read()).service.plugins).toEqual({
      twoFactor: { enabled: false },
      passkey: { enabled: false },
      magicLink: { enabled: false },
      emailOTP: { enabled: false },
      organization: { enabled: false },
      admin: { enabled: false },
    });
    const on = await ctx.settings({ plugins: { twoFactor: { enabled: true, issuer: 'Plugin Shop' } } });
    expect(on.service.plugins.twoFactor).toEqual({ enabled: true, issuer: 'Plugin Shop' });
    const off = await ctx.settings({ plugins: { twoFactor: { enabled: false } } });
    expect(off.service.plugins.twoFactor).toEqual({ enabled: false, issuer: 'Plugin Shop' });
    const bad = await fetch(`${gateway}/dashboard/api/applications/${ctx.account.applicationId}/sign-in/settings`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ctx.account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plugins: { telepathy: { enabled: true } } }),
    });
    expect(bad.status).toBe(400);

    // The session carries the plugins' fields (as Better Auth's does with those plugins on).
    const { client } = pluginClient(ctx, []);
    expect((await client.signUp.email({ email: 'switches@example.com', password: 'a long passphrase', name: 'Sam' })).error).toBeNull();
    const session = await client.getSession();
    expect(session.data?.user).toMatchObject({ twoFactorEnabled: false, role: 'user', banned: false });
    expect(session.data?.session).toMatchObject({ activeOrganizationId: null, impersonatedBy: null });
    // Two-factor is off again: its routes are unknown paths.
    const offRoute = await client.$fetch('/two-factor/enable', { method: 'POST', body: { password: 'a long passphrase' } });
    expect(offRoute.error).toMatchObject({ status: 404 });
    const [row] = await ctx.tenantQuery('SELECT two_factor_enabled, role, banned FROM service_auth.users WHERE email = $1', ['switches@example.com']);
    expect(row).toEqual({ two_factor_enabled: false, role: 'user', banned: false });
  });
}
