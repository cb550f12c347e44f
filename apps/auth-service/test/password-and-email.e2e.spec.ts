import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

describe('password reset, change and email verification (platform outbox)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let verified: { applicationId: string; authUrl: string };

  const lastEmail = async (applicationId: string, to: string) =>
    h.prisma.email.findFirstOrThrow({ where: { applicationId, toAddress: to }, orderBy: { createdAt: 'desc' } });
  const linkIn = (text: string) => new URL(/(http\S+)/.exec(text)![1]!);

  beforeAll(async () => {
    h = await startAuthHarness('authpassword', { AUTH_DEV_EMAILS_PER_HOUR: '5' });
    shop = await h.createTenant('shop');
    verified = await h.createTenant('verified', { settings: { requireEmailVerification: true } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('resets a password through the emailed link, once, and signs the user out everywhere', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('jack@example.com', 'old password 1');
    const known = await c.post('/request-password-reset', { email: 'jack@example.com', redirectTo: `${originOf('shop')}/reset` });
    const unknown = await c.post('/request-password-reset', { email: 'nobody@example.com', redirectTo: `${originOf('shop')}/reset` });
    expect(known.status).toBe(200);
    expect(await known.text()).toBe(await unknown.text());
    expect(await h.prisma.email.count({ where: { applicationId: shop.applicationId, toAddress: 'nobody@example.com' } })).toBe(0);

    const email = await lastEmail(shop.applicationId, 'jack@example.com');
    expect(email).toMatchObject({ kind: 'password_reset', status: 'outbox' });
    const link = linkIn(email.textBody);
    const token = link.pathname.split('/').pop()!;
    expect(token).toMatch(/^[A-Za-z0-9]{24}$/);
    const redirect = await fetch(link, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(`${originOf('shop')}/reset?token=${token}`);

    const tooLong = await c.post('/reset-password', { token, newPassword: 'x'.repeat(73) });
    expect((await tooLong.json()).code).toBe('PASSWORD_TOO_LONG');
    const reset = await c.post('/reset-password', { token, newPassword: 'new password 2' });
    expect(await reset.json()).toEqual({ status: true });
    expect(await (await c.get('/get-session')).json()).toBeNull();
    const reuse = await c.post('/reset-password', { token, newPassword: 'new password 3' });
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).code).toBe('INVALID_TOKEN');
    expect((await c.signIn('jack@example.com', 'old password 1')).status).toBe(401);
    expect((await c.signIn('jack@example.com', 'new password 2')).status).toBe(200);
  });

  it('changes a password with the current one and revokes the other sessions', async () => {
    const a = new TestClient(shop.authUrl, originOf('shop'));
    await a.signUp('kim@example.com', 'first password');
    const b = new TestClient(shop.authUrl, originOf('shop'));
    await b.signIn('kim@example.com', 'first password');
    const wrong = await a.post('/change-password', { currentPassword: 'not it at all', newPassword: 'second password' });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).code).toBe('INVALID_PASSWORD');
    const ok = await a.post('/change-password', { currentPassword: 'first password', newPassword: 'second password', revokeOtherSessions: true });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ token: null, user: { email: 'kim@example.com' } });
    expect(await (await b.get('/get-session')).json()).toBeNull();
    expect(await (await a.get('/get-session')).json()).not.toBeNull();
    expect((await new TestClient(shop.authUrl, originOf('shop')).signIn('kim@example.com', 'second password')).status).toBe(200);
    expect((await new TestClient(shop.authUrl, null).get('/list-sessions')).status).toBe(401);
  });

  it('requires a verified email where the application asks for it, and verifies through the link', async () => {
    const c = new TestClient(verified.authUrl, originOf('verified'));
    const up = await c.signUp('lee@example.com');
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ token: null, user: { email: 'lee@example.com', emailVerified: false } });
    expect(up.headers.getSetCookie()).toEqual([]);
    const denied = await c.signIn('lee@example.com');
    expect(denied.status).toBe(403);
    expect((await denied.json()).code).toBe('EMAIL_NOT_VERIFIED');

    const email = await lastEmail(verified.applicationId, 'lee@example.com');
    expect(email.kind).toBe('email_verification');
    const link = linkIn(email.textBody);
    link.searchParams.set('callbackURL', `${originOf('verified')}/welcome`);
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${originOf('verified')}/welcome`);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.headers.get('location')).toBe(`${originOf('verified')}/welcome?error=INVALID_TOKEN`);
    const signIn = await c.signIn('lee@example.com');
    expect(signIn.status).toBe(200);
    expect((await signIn.json()).user.emailVerified).toBe(true);
    expect((await fetch(`${verified.authUrl}/verify-email?token=nope`)).status).toBe(401);
  });

  it('sends verification on request with the same answer for any address, and rate limits the shared sender per application', async () => {
    const c = new TestClient(shop.authUrl, originOf('shop'));
    await c.signUp('mo@example.com');
    const before = await h.prisma.email.count({ where: { applicationId: shop.applicationId } });
    const answers = new Set<string>();
    for (let i = 0; i < 10; i++)
      answers.add(await (await c.post('/send-verification-email', { email: i < 8 ? 'mo@example.com' : 'ghost@example.com' })).text());
    expect([...answers]).toEqual([JSON.stringify({ status: true })]);
    // 5 per hour for this application, 2 already used by the reset test above.
    expect(before).toBe(1);
    expect(await h.prisma.email.count({ where: { applicationId: shop.applicationId } })).toBe(5);
    expect(await h.prisma.email.count({ where: { applicationId: verified.applicationId } })).toBeGreaterThan(0);
  });
});
