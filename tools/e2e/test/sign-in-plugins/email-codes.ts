import { emailOTPClient, magicLinkClient } from 'better-auth/client/plugins';
import { pluginClient, type SharedContext } from './context.js';

/** Magic links and email codes (Better Auth's magicLinkClient and emailOTPClient), read from the platform's outbox. */
export function emailCodeTests(shared: SharedContext) {
  const [address, codeAddress, offAddress] = ['198.51.100.71', '198.51.100.72', '198.51.100.73'];
  it('magic link: switched on through the owners’ API, the emailed link signs in once; opened again it is refused', async () => {
    const ctx = shared.current;
    const on = await ctx.settings({ plugins: { magicLink: { enabled: true }, emailOTP: { enabled: true } } });
    expect(on.service.plugins).toMatchObject({ magicLink: { enabled: true }, emailOTP: { enabled: true } });
    const { client, jar } = pluginClient(ctx, [magicLinkClient()], address);
    const sent = await client.signIn.magicLink({ email: 'link@example.com', name: 'Lin', callbackURL: `${ctx.origin}/home` });
    expect(sent.error).toBeNull();
    const [email] = await ctx.outbox('link@example.com');
    expect(email).toMatchObject({ kind: 'magic_link' });
    const link = new URL(/(http\S+)/.exec(email!.text_body)![1]!);
    expect(link.pathname).toBe(`/a/${ctx.account.slug}/magic-link/verify`);
    const [row] = await ctx.tenantQuery(`SELECT identifier FROM service_auth.verifications WHERE identifier LIKE 'magic-link:%'`);
    expect(row.identifier).toMatch(/^magic-link:[0-9a-f]{64}$/);
    expect(row.identifier).not.toContain(link.searchParams.get('token'));

    // Opened in the browser: a redirect to the app with the session cookie.
    const opened = await fetch(`${ctx.authUrl}/magic-link/verify${link.search}`, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toBe(`${ctx.origin}/home`);
    const cookie = opened.headers.getSetCookie()[0]!.split(';')[0]!;
    jar.set(cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1));
    expect((await client.getSession()).data?.user).toMatchObject({ email: 'link@example.com', name: 'Lin', emailVerified: true });

    const again = await fetch(`${ctx.authUrl}/magic-link/verify${link.search}`, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe(`${ctx.origin}/home?error=INVALID_TOKEN`);
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it('email code: the emailed code signs in (stored hashed); a wrong code is refused; both plugins off again are unknown paths', async () => {
    const ctx = shared.current;
    const { client } = pluginClient(ctx, [emailOTPClient()], codeAddress);
    expect((await client.emailOtp.sendVerificationOtp({ email: 'code@example.com', type: 'sign-in' })).data).toEqual({ success: true });
    const [email] = await ctx.outbox('code@example.com');
    expect(email).toMatchObject({ kind: 'email_otp' });
    const code = /\b(\d{6})\b/.exec(email!.text_body)![1]!;
    const [row] = await ctx.tenantQuery(`SELECT value FROM service_auth.verifications WHERE identifier = 'sign-in-otp-code@example.com'`);
    expect(row.value).toMatch(/^[0-9a-f]{64}:0$/);

    const wrong = await client.signIn.emailOtp({ email: 'code@example.com', otp: code === '000000' ? '000001' : '000000' });
    expect(wrong.error).toMatchObject({ status: 400, code: 'INVALID_OTP' });
    const signedIn = await client.signIn.emailOtp({ email: 'code@example.com', otp: code });
    expect(signedIn.error).toBeNull();
    expect((await client.getSession()).data?.user).toMatchObject({ email: 'code@example.com', emailVerified: true });

    await ctx.settings({ plugins: { magicLink: { enabled: false }, emailOTP: { enabled: false } } });
    expect(
      (await pluginClient(ctx, [emailOTPClient()], offAddress).client.emailOtp.sendVerificationOtp({ email: 'code@example.com', type: 'sign-in' })).error,
    ).toMatchObject({ status: 404 });
    expect((await pluginClient(ctx, [magicLinkClient()], offAddress).client.signIn.magicLink({ email: 'link@example.com' })).error).toMatchObject({
      status: 404,
    });
  });
}
