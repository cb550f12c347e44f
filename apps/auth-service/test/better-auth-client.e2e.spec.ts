import { createAuthClient } from 'better-auth/client';
import { jwtClient } from 'better-auth/client/plugins';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { browserLikeFetch, startAuthHarness, originOf, type AuthHarness } from './harness.js';

describe('Better Auth’s own client (better-auth/client 1.7) against the service', () => {
  let h: AuthHarness;
  let shop: { authUrl: string };
  beforeAll(async () => {
    h = await startAuthHarness('authbaclient');
    shop = await h.createTenant('shop');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('signs up, signs in, reads the session, gets a JWT, manages sessions and signs out', async () => {
    const browser = browserLikeFetch(originOf('shop'));
    const client = createAuthClient({ baseURL: shop.authUrl, plugins: [jwtClient()], fetchOptions: { customFetchImpl: browser.impl } });

    const up = await client.signUp.email({ email: 'Nora@Example.com', password: 'correct horse battery', name: 'Nora' });
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ token: expect.any(String), user: { email: 'nora@example.com', name: 'Nora', emailVerified: false } });

    const dup = await client.signUp.email({ email: 'nora@example.com', password: 'correct horse battery', name: 'Nora' });
    expect(dup.error).toMatchObject({ status: 422, code: 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL' });

    await client.signOut();
    expect((await client.getSession()).data).toBeNull();

    const bad = await client.signIn.email({ email: 'nora@example.com', password: 'wrong password' });
    expect(bad.error).toMatchObject({ status: 401, code: 'INVALID_EMAIL_OR_PASSWORD' });
    const signIn = await client.signIn.email({ email: 'nora@example.com', password: 'correct horse battery' });
    expect(signIn.error).toBeNull();
    expect(signIn.data).toMatchObject({ redirect: false, token: expect.any(String), user: { email: 'nora@example.com' } });

    const session = await client.getSession();
    expect(session.error).toBeNull();
    expect(session.data?.user).toMatchObject({ email: 'nora@example.com', name: 'Nora' });
    expect(session.data?.session.token).toBe(signIn.data!.token);
    expect(session.data?.session.expiresAt).toBeInstanceOf(Date);
    expect(browser.jwts.length).toBeGreaterThan(0);

    const { data: tokenData } = await client.token();
    const { payload } = await jwtVerify(tokenData!.token, createRemoteJWKSet(new URL(`${shop.authUrl}/jwks`)), {
      issuer: shop.authUrl,
      audience: shop.authUrl,
    });
    expect(payload.sub).toBe(session.data!.user.id);

    expect((await client.updateUser({ name: 'Nora N' })).error).toBeNull();
    expect((await client.getSession()).data?.user.name).toBe('Nora N');
    const sessions = await client.listSessions();
    expect(sessions.data).toHaveLength(1);
    expect((await client.changePassword({ currentPassword: 'correct horse battery', newPassword: 'another good one' })).error).toBeNull();

    const out = await client.signOut();
    expect(out.data).toEqual({ success: true });
    expect((await client.getSession()).data).toBeNull();
    expect((await client.signIn.email({ email: 'nora@example.com', password: 'another good one' })).error).toBeNull();
    expect((await client.$fetch('/ok')).data).toEqual({ ok: true });
  });
});
