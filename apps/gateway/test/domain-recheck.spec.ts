/**
 * Verified custom domains are re-checked periodically (issue 19, HTTPS): after
 * DOMAIN_RECHECK_FAILURES re-checks in a row that find the TXT record gone or wrong, the domain is
 * unverified, its trusted origins go and the edges are told (routes channel) to drop its route and
 * certificate. Real gateway, Postgres, Redis and DNS server; a one-second interval.
 */
import { routesChannel } from '@slipway/messaging';
import { TEST_REDIS_URL, TestDnsServer, waitFor } from '@slipway/testing';
import { Redis } from 'ioredis';
import { DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

interface DomainView {
  id: string;
  status: 'pending' | 'verified';
  record: { name: string; value: string };
  checkedAt: string | null;
  checkError: string | null;
  failedChecks: number;
  trustedOrigins: string[];
}

describe('periodic re-check of verified custom domains (real gateway, Postgres, Redis, DNS)', () => {
  let gw: GatewayUnderTest;
  let dns: TestDnsServer;
  let owner: DashboardClient;
  let app: string;
  let subscriber: Redis;
  const announced: string[] = [];

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGateway('domain-recheck', {
      BCRYPT_ROUNDS: '4',
      SLIPWAY_DNS_SERVERS: dns.address,
      DOMAIN_RECHECK_INTERVAL_MS: '1000',
      DOMAIN_RECHECK_FAILURES: '3',
    });
    subscriber = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    subscriber.on('message', (_channel, message: string) => announced.push((JSON.parse(message) as { applicationId: string }).applicationId));
    await subscriber.subscribe(routesChannel(gw.redisPrefix).name);
    owner = new DashboardClient(gw.url);
    expect((await owner.signUp('recheck@example.com')).status).toBe(201);
    app = (await owner.post('/applications', { name: 'Shop' })).json.id;
  });
  afterAll(async () => {
    subscriber?.disconnect();
    await gw?.close();
    await dns?.close();
  });

  const view = async (id: string) => ((await owner.get(`/applications/${app}/domains`)).json.domains as DomainView[]).find((d) => d.id === id)!;
  /** Waits for the next re-check of the claim (its checkedAt moves on). */
  const nextCheck = async (id: string) => {
    const before = (await view(id)).checkedAt;
    return waitFor(
      async () => {
        const now = await view(id);
        return now.checkedAt !== before ? now : undefined;
      },
      { timeoutMs: 15_000, what: 'the next re-check' },
    );
  };

  it('keeps a domain whose record stays, ignores a failing resolver, and unverifies after N misses in a row', async () => {
    const claimed = (await owner.post(`/applications/${app}/domains`, { hostname: 'lapse.example.com' })).json as DomainView;
    dns.setTxt(claimed.record.name, [claimed.record.value]);
    expect((await owner.post(`/applications/${app}/domains/${claimed.id}/verify`)).json.status).toBe('verified');

    // Found again: nothing changes.
    await nextCheck(claimed.id);
    expect(await nextCheck(claimed.id)).toMatchObject({ status: 'verified', failedChecks: 0, checkError: null });

    // The platform's resolver failing (SERVFAIL) is shown but never counts.
    dns.fail(claimed.record.name);
    await nextCheck(claimed.id);
    for (let i = 0; i < 3; i++)
      expect(await nextCheck(claimed.id)).toMatchObject({ status: 'verified', failedChecks: 0, checkError: expect.stringContaining('DNS lookup') });

    // One miss, then the record is back: the count starts again.
    dns.setTxt(claimed.record.name, ['slipway-verify=someone-else']);
    expect(
      await waitFor(async () => ((await view(claimed.id)).failedChecks === 1 ? view(claimed.id) : undefined), { timeoutMs: 15_000, what: 'one counted miss' }),
    ).toMatchObject({ status: 'verified', checkError: expect.stringContaining('Re-check 1 of 3 failed') });
    dns.setTxt(claimed.record.name, [claimed.record.value]);
    expect(
      await waitFor(async () => ((await view(claimed.id)).failedChecks === 0 ? view(claimed.id) : undefined), {
        timeoutMs: 15_000,
        what: 'the count to reset',
      }),
    ).toMatchObject({ status: 'verified', checkError: null });

    // Gone for good: after three misses in a row the domain lapses.
    announced.length = 0;
    dns.remove(claimed.record.name);
    const lapsed = await waitFor(
      async () => {
        const now = await view(claimed.id);
        return now.status === 'pending' ? now : undefined;
      },
      { timeoutMs: 20_000, what: 'the domain to lapse' },
    );
    expect(lapsed).toMatchObject({ failedChecks: 0, trustedOrigins: [], checkError: expect.stringContaining('Verification lapsed: 3 re-checks in a row') });
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM trusted_origins WHERE domain_id = $1`, [claimed.id])).rows[0].n).toBe(0);
    await waitFor(() => announced.includes(app), { timeoutMs: 5000, what: 'the edges to be told' });

    // A lapsed (pending) claim is not re-checked behind the owner's back: Verify brings it back.
    dns.setTxt(claimed.record.name, [claimed.record.value]);
    expect((await owner.post(`/applications/${app}/domains/${claimed.id}/verify`)).json).toMatchObject({ status: 'verified', failedChecks: 0 });
  }, 90_000);
});
