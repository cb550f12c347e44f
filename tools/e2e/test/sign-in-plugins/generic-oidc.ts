import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { SharedContext } from './context.js';
import { pluginClient } from './context.js';

/**
 * Generic OpenID Connect: the owner adds a provider through the owners' API, a user signs in with
 * it through Better Auth 1.7's client (`signIn.social({provider})`, genericOAuth's way in 1.7).
 * The provider is a real OIDC server (oauth2-mock-server, the auth-service's test fixture) in its
 * own process on 127.0.0.1 over http: the platform runs with AUTH_OIDC_ALLOW_PRIVATE_ISSUERS=true
 * (context.ts), the only way a loopback issuer is accepted (a self-signed https certificate would
 * not help: the address itself is refused without the variable).
 */
export function genericOidcTests(shared: SharedContext) {
  describe('generic OpenID Connect', () => {
    let idp: ChildProcess;
    let issuer = '';
    beforeAll(async () => {
      const fixture = fileURLToPath(new URL('../../../../apps/auth-service/test/fixtures/oidc-server.mjs', import.meta.url));
      idp = spawn(process.execPath, [fixture, '0'], {
        cwd: fileURLToPath(new URL('../../../../apps/auth-service/', import.meta.url)),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const [line] = (await once(idp.stdout!, 'data')) as [Buffer];
      issuer = /listening (\S+)/.exec(line.toString())![1]!.replace('localhost', '127.0.0.1');
    });
    afterAll(() => {
      idp?.kill('SIGTERM');
    });

    it('the owner adds a provider through the owners’ API; a user signs in with it (rows in service_auth)', async () => {
      const ctx = shared.current;
      const view = await ctx.settings({ oidcProviders: { 'corp-sso': { issuer, clientId: 'corp-client', clientSecret: 'owner-secret-corp' } } });
      expect(view.service.oidcProviders).toEqual({ 'corp-sso': { issuer, clientId: 'corp-client', callbackUrl: `${ctx.authUrl}/callback/corp-sso` } });
      expect(JSON.stringify(view)).not.toContain('owner-secret-corp');

      const { client, jar } = pluginClient(ctx, []);
      const start = await client.signIn.social({ provider: 'corp-sso' as 'github', callbackURL: `${ctx.origin}/home`, disableRedirect: true });
      expect(start.error).toBeNull();
      const user = { claims: { sub: 'corp-ida', email: 'ida@example.com', email_verified: true, name: 'Ida' } };
      const atIdp = await fetch(`${start.data!.url}&test_user=${Buffer.from(JSON.stringify(user)).toString('base64url')}`, { redirect: 'manual' });
      const callback = new URL(atIdp.headers.get('location')!);
      expect(callback.toString().startsWith(`${ctx.authUrl}/callback/corp-sso?`)).toBe(true);
      // The browser follows the provider's redirect back to the callback (a 302 to the app; the cookie jar keeps the session).
      await client.$fetch(callback.toString(), { method: 'GET' }).catch(() => undefined);
      const session = await client.getSession();
      expect(session.data?.user).toMatchObject({ email: 'ida@example.com', name: 'Ida', emailVerified: true });
      expect(jar.size).toBeGreaterThan(0);
      expect(
        await ctx.tenantQuery(
          `SELECT a.provider_id, a.account_id FROM service_auth.accounts a JOIN service_auth.users u ON u.id = a.user_id WHERE u.email = 'ida@example.com'`,
        ),
      ).toEqual([{ provider_id: 'corp-sso', account_id: 'corp-ida' }]);

      // Removed by the owner: the provider is unknown again.
      await ctx.settings({ oidcProviders: { 'corp-sso': null } });
      const gone = await pluginClient(ctx, []).client.signIn.social({ provider: 'corp-sso' as 'github', disableRedirect: true });
      expect(gone.error).toMatchObject({ status: 404, code: 'PROVIDER_NOT_FOUND' });
    });
  });
}
