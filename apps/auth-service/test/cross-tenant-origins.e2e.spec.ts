import fc from 'fast-check';
import { originCases } from './origin-arbitrary.js';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

/**
 * Issue 20, item 2: with local development allowed, tenant B's address under the publishing domain
 * (`http://attacker.localhost:8080`) is not "localhost": a password reset for tenant A's user may
 * not send the token to B's page.
 */
describe('trusted origins never leak across tenants through "localhost" (real HTTP, Postgres, Redis)', () => {
  let h: AuthHarness;
  let victim: { applicationId: string; authUrl: string };
  const victimEmail = 'victim@example.com';
  const attackerPage = `${originOf('attacker')}/steal`;

  const emailsTo = (to: string) => h.prisma.email.findMany({ where: { applicationId: victim.applicationId, toAddress: to }, orderBy: { createdAt: 'asc' } });

  beforeAll(async () => {
    h = await startAuthHarness('authxtenant', { AUTH_TRUSTED_PROXIES: '127.0.0.1' });
    victim = await h.createTenant('victim', { allowLocalhost: true });
    await h.createTenant('attacker', { allowLocalhost: true });
    expect((await new TestClient(victim.authUrl, originOf('victim')).signUp(victimEmail, 'victim password 1')).status).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the attack end to end: B asks A’s service for a reset to B’s page, takes the token, resets, signs in — refused at every step', async () => {
    // Step 1, from B's page (B's Origin) or with A's Origin forged outside a browser: refused, no email.
    const fromB = new TestClient(victim.authUrl, originOf('attacker'), '198.51.100.60');
    const asked = await fromB.post('/request-password-reset', { email: victimEmail, redirectTo: attackerPage });
    expect(asked.status).toBe(403);
    expect(await asked.json()).toEqual({ code: 'INVALID_ORIGIN', message: expect.any(String) });
    const forged = new TestClient(victim.authUrl, originOf('victim'), '198.51.100.61');
    for (const redirectTo of [
      attackerPage,
      'http://ATTACKER.localhost:8080/steal',
      'http://attacker.localhost.:8080/steal',
      'http://victim.localhost:8080@attacker.localhost:8080/steal',
      'http://localhost.:8080/steal',
    ]) {
      const res = await forged.post('/request-password-reset', { email: victimEmail, redirectTo });
      expect([redirectTo, res.status, await res.json()]).toEqual([redirectTo, 403, { code: 'INVALID_REDIRECT_URL', message: expect.any(String) }]);
    }
    expect(await emailsTo(victimEmail)).toEqual([]);

    // Step 2: the victim's own, legitimate reset email; B tries to have its link land on B's page.
    expect((await forged.post('/request-password-reset', { email: victimEmail, redirectTo: `${originOf('victim')}/reset` })).status).toBe(200);
    const emails = await emailsTo(victimEmail);
    expect(emails).toHaveLength(1);
    expect(emails[0]!.textBody).not.toContain('attacker');
    const link = new URL(/(http\S+)/.exec(emails[0]!.textBody)![1]!);
    expect(link.searchParams.get('callbackURL')).toBe(`${originOf('victim')}/reset`);
    const token = link.pathname.split('/').pop()!;
    for (const callbackURL of [attackerPage, 'http://attacker.localhost:8080', 'http://x.localhost:5173/steal']) {
      const hijacked = new URL(link);
      hijacked.searchParams.set('callbackURL', callbackURL);
      const res = await fetch(hijacked, { redirect: 'manual' });
      expect([callbackURL, res.status, res.headers.get('location')]).toEqual([callbackURL, 403, null]);
      expect((await res.json()).code).toBe('INVALID_CALLBACK_URL');
    }
    // Step 3: B's page could not have learned the token, so the account is still the victim's.
    const again = await new TestClient(victim.authUrl, originOf('attacker'), '198.51.100.62').post('/reset-password', {
      token,
      newPassword: 'attacker password',
    });
    expect(again.status).toBe(403);
    expect((await new TestClient(victim.authUrl, originOf('victim'), '198.51.100.63').signIn(victimEmail, 'attacker password')).status).toBe(401);
    expect((await new TestClient(victim.authUrl, originOf('victim'), '198.51.100.64').signIn(victimEmail, 'victim password 1')).status).toBe(200);
    // The developer's own machine still works while local development is allowed.
    for (const local of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080']) {
      const res = await new TestClient(victim.authUrl, local, '198.51.100.65').post('/request-password-reset', {
        email: 'nobody@example.com',
        redirectTo: `${local}/reset`,
      });
      expect([local, res.status]).toEqual([local, 200]);
    }
  });

  it('property: over generated Origins and redirect targets, only the tenant’s exact origin and the three loopback hosts pass', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(originCases({ scheme: 'http', host: 'victim.localhost', port: 8080 }), async (c) => {
        const address = `203.0.113.${++n % 250}`;
        // As a redirect target (JSON body: any characters).
        const redirect = await new TestClient(victim.authUrl, originOf('victim'), address).post('/request-password-reset', {
          email: 'nobody@example.com',
          redirectTo: c.value,
        });
        expect([c.value, redirect.status]).toEqual([c.value, c.trusted ? 200 : 403]);
        if (!c.trusted) expect(await redirect.json()).toEqual({ code: 'INVALID_REDIRECT_URL', message: expect.any(String) });
        // As the Origin of a change (header: ASCII only).
        if (c.ascii) {
          const res = await new TestClient(victim.authUrl, c.value, address).post('/sign-out');
          expect([c.value, res.status]).toEqual([c.value, c.trusted ? 200 : 403]);
          expect(res.headers.get('access-control-allow-origin')).toBe(c.trusted ? c.value : null);
        }
      }),
      { numRuns: 150 },
    );
  });
});
