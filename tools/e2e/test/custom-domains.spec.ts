/**
 * Issue 20, item 8, through the whole platform as `pnpm start` runs it (launcher → gateway,
 * build worker, edge, auth-service; real CLI deploys): a custom domain claimed without proof is
 * neither served by the edge (by Host) nor trusted by the sign-in service; the rightful owner
 * claims and verifies it through a DNS server on 127.0.0.1 (SLIPWAY_DNS_SERVERS), and only then
 * does it route to their application and become their trusted origin.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, TestDnsServer, waitFor } from '@slipway/testing';
import { Platform, type Account } from './support/platform.js';

const DOMAIN = 'shop.example.com';

describe('custom domains need proof of control (whole platform)', () => {
  let platform: Platform;
  let dns: TestDnsServer;
  let owner: Account;
  let evil: Account;
  const sites: string[] = [];
  const cookies = new Map<string, string>();

  const dashboard = async (who: Account, method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${platform.ports.gateway}/dashboard/api${path}`, {
      method,
      headers: {
        origin: `http://localhost:${platform.ports.gateway}`,
        'x-slipway-csrf': '1',
        'content-type': 'application/json',
        cookie: cookies.get(who.ownerId) ?? '',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any, headers: res.headers };
  };
  /** A static site whose page says whose it is. */
  const site = async (text: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-e2e-domain-'));
    await cp(join(FIXTURES, 'static-site'), dir, { recursive: true });
    await writeFile(join(dir, 'index.html'), `<!doctype html><title>${text}</title><p>${text}</p>\n`);
    sites.push(dir);
    return dir;
  };
  const deploy = async (who: Account, text: string) => {
    const result = await platform.cli(['deploy', await site(text), '--json'], { SLIPWAY_API_KEY: who.apiKey });
    expect({ code: result.code, status: JSON.parse(result.stdout).status }).toEqual({ code: 0, status: 'succeeded' });
    // Edges learn of the new release over pub/sub, just after the deploy is reported.
    await waitFor(async () => (await platform.viaEdge(who.slug)).body.includes(text) || undefined, {
      timeoutMs: 15_000,
      what: `${who.slug} to serve its release`,
    });
  };
  const enableSignIn = async (who: Account) => {
    const res = await fetch(`http://127.0.0.1:${platform.ports.gateway}/api/v1/auth?applicationId=${who.applicationId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${who.ownerToken}` },
    });
    expect(res.status).toBe(201);
  };
  /** A browser on `origin` signing up at the application's sign-in service. */
  const signUpFrom = async (who: Account, origin: string, email: string) => {
    const res = await fetch(`http://127.0.0.1:${platform.ports.auth}/a/${who.slug}/sign-up/email`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'a long passphrase', name: 'Visitor' }),
    });
    return { status: res.status, json: (await res.json()) as { code?: string } };
  };
  const byHost = (host: string) => platform.viaEdge('', '/', { host });

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    platform = await Platform.start('e2e-domains', { SLIPWAY_DNS_SERVERS: dns.address });
    owner = await platform.bootstrap('rightful@example.com', 'Tea Shop');
    evil = await platform.bootstrap('attacker@example.com', 'Evil Shop');
    for (const who of [owner, evil]) {
      // The owner made by `admin bootstrap` claims the account by signing up with its email.
      const email = who === owner ? 'rightful@example.com' : 'attacker@example.com';
      const res = await dashboard(who, 'POST', '/session/sign-up', { email, password: 'correct horse battery', name: 'Owner' });
      expect(res.status).toBeLessThan(300);
      cookies.set(
        who.ownerId,
        res.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      );
    }
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    await dns?.close();
    for (const dir of sites) await rm(dir, { recursive: true, force: true });
  });

  it('an attacker’s unverified claim is not served by the edge and not trusted by the sign-in service', async () => {
    const claim = await dashboard(evil, 'POST', `/applications/${evil.applicationId}/domains`, { hostname: DOMAIN });
    expect(claim).toMatchObject({ status: 201, json: { status: 'pending', trustedOrigins: [] } });
    // Deploying and switching sign-in on afterwards rebuild the attacker's routes and origins.
    await enableSignIn(evil);
    await deploy(evil, 'attacker page');
    for (const host of [DOMAIN, 'SHOP.example.COM', `${DOMAIN}:${platform.ports.edge}`, `${DOMAIN}.`]) {
      const res = await byHost(host);
      expect([host, res.status, res.body]).toEqual([host, 404, expect.not.stringContaining('attacker page')]);
    }
    for (const origin of [`https://${DOMAIN}`, `http://${DOMAIN}`]) {
      const res = await signUpFrom(evil, origin, 'victim@example.com');
      expect([origin, res.status, res.json.code]).toEqual([origin, 403, 'INVALID_ORIGIN']);
    }
    // A wrong record proves nothing.
    dns.setTxt(`_slipway-challenge.${DOMAIN}`, ['slipway-verify=guess']);
    const verify = await dashboard(evil, 'POST', `/applications/${evil.applicationId}/domains/${claim.json.id}/verify`);
    expect([verify.status, verify.json.code, verify.json.reason]).toEqual([422, 'domain_unverified', 'wrong_value']);
    expect((await byHost(DOMAIN)).status).toBe(404);
  }, 240_000);

  it('the rightful owner can still claim and verify it: then it routes to their application and becomes their trusted origin only', async () => {
    await enableSignIn(owner);
    await deploy(owner, 'rightful shop');
    const claim = await dashboard(owner, 'POST', `/applications/${owner.applicationId}/domains`, { hostname: 'Shop.Example.com.' });
    expect(claim).toMatchObject({ status: 201, json: { hostname: DOMAIN, status: 'pending' } });
    expect((await signUpFrom(owner, `https://${DOMAIN}`, 'early@example.com')).status).toBe(403);
    dns.setTxt(claim.json.record.name, [claim.json.record.value]);
    const verify = await dashboard(owner, 'POST', `/applications/${owner.applicationId}/domains/${claim.json.id}/verify`);
    expect([verify.status, verify.json.status]).toEqual([200, 'verified']);
    await waitFor(async () => (await byHost(DOMAIN)).body.includes('rightful shop') || undefined, {
      timeoutMs: 15_000,
      what: 'the edge to serve the verified domain',
    });
    expect((await byHost('SHOP.EXAMPLE.COM')).body).toContain('rightful shop');
    await waitFor(async () => (await signUpFrom(owner, `https://${DOMAIN}`, 'grace@example.com')).status === 200 || undefined, {
      timeoutMs: 15_000,
      what: 'the sign-in service to trust the verified domain',
    });
    const refused = await signUpFrom(evil, `https://${DOMAIN}`, 'victim@example.com');
    expect([refused.status, refused.json.code]).toEqual([403, 'INVALID_ORIGIN']);
    // The attacker cannot verify over the holder while the holder's value is published.
    const evilClaim = (await dashboard(evil, 'GET', `/applications/${evil.applicationId}/domains`)).json.domains[0];
    dns.setTxt(claim.json.record.name, [claim.json.record.value, evilClaim.record.value]);
    const taken = await dashboard(evil, 'POST', `/applications/${evil.applicationId}/domains/${evilClaim.id}/verify`);
    expect([taken.status, taken.json.code]).toEqual([409, 'domain_taken']);
    expect((await byHost(DOMAIN)).body).toContain('rightful shop');
  }, 240_000);
});
