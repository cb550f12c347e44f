/**
 * Custom domains need proof of control (issue 20, item 8): a claim routes and is trusted only
 * once TXT `_slipway-challenge.<name>` holds `slipway-verify=<its token>`, checked through a real
 * DNS server on 127.0.0.1 (SLIPWAY_DNS_SERVERS). Real HTTP, real Postgres.
 */
import { TestDnsServer } from '@slipway/testing';
import fc from 'fast-check';
import { DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

interface DomainView {
  id: string;
  hostname: string;
  displayName: string;
  status: 'pending' | 'verified';
  record: { name: string; type: 'TXT'; value: string };
  checkError: string | null;
  trustedOrigins: string[];
}

describe('custom domains: proof of control before routing or trust (real HTTP, Postgres, DNS)', () => {
  let gw: GatewayUnderTest;
  let dns: TestDnsServer;
  let owner: DashboardClient;
  let attacker: DashboardClient;
  let ownerApp: string;
  let attackerApp: string;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGateway('domains', {
      BCRYPT_ROUNDS: '4',
      SLIPWAY_DNS_SERVERS: dns.address,
      APPS_DOMAIN: 'localhost:8080,Apps.Platform.Test',
      AUTH_PUBLIC_URL: 'http://signin.platform.test:3001',
    });
    owner = new DashboardClient(gw.url);
    attacker = new DashboardClient(gw.url);
    expect((await owner.signUp('rightful@example.com')).status).toBe(201);
    expect((await attacker.signUp('attacker@example.com')).status).toBe(201);
    ownerApp = (await owner.post('/applications', { name: 'Shop' })).json.id;
    attackerApp = (await attacker.post('/applications', { name: 'Evil' })).json.id;
  });
  afterAll(async () => {
    await gw?.close();
    await dns?.close();
  });

  const claim = async (client: DashboardClient, app: string, hostname: string) => {
    const res = await client.post(`/applications/${app}/domains`, { hostname });
    expect([hostname, res.status, res.json.error]).toEqual([hostname, 201, undefined]);
    return res.json as DomainView;
  };
  const verify = (client: DashboardClient, app: string, id: string) => client.post(`/applications/${app}/domains/${id}/verify`);
  const trusted = async (hostname: string) =>
    (
      await gw.sql.query<{ application_id: string; origin: string }>(
        `SELECT application_id, origin FROM trusted_origins WHERE origin IN ($1, $2) ORDER BY origin`,
        [`https://${hostname}`, `http://${hostname}`],
      )
    ).rows;
  const verifiedHolder = async (hostname: string) =>
    (await gw.sql.query(`SELECT application_id FROM domains WHERE hostname = $1 AND verified_at IS NOT NULL`, [hostname])).rows.map((r) => r.application_id);

  it('an attacker claim is pending: a per-claim record to set, no trusted origin, and it blocks no one', async () => {
    const evil = await claim(attacker, attackerApp, 'shop.example.com');
    expect(evil).toMatchObject({
      hostname: 'shop.example.com',
      status: 'pending',
      trustedOrigins: [],
      record: { name: '_slipway-challenge.shop.example.com', type: 'TXT', value: expect.stringMatching(/^slipway-verify=[0-9a-f]{64}$/) },
    });
    expect(await trusted('shop.example.com')).toEqual([]);
    // The rightful owner can still claim it, with a different token.
    const mine = await claim(owner, ownerApp, 'shop.example.com');
    expect(mine.status).toBe('pending');
    expect(mine.record.value).not.toBe(evil.record.value);
    // The token is shown to its own owner only.
    const seenByAttacker = JSON.stringify((await attacker.get(`/applications/${attackerApp}/domains`)).json);
    expect(seenByAttacker).not.toContain(mine.record.value);
    expect((await attacker.get(`/applications/${ownerApp}/domains`)).status).toBe(404);
  });

  it('refuses to verify without the exact record: none, wrong value, wrong name, another claim’s token, split oddly, lookup failure', async () => {
    const evil = (await attacker.get(`/applications/${attackerApp}/domains`)).json.domains.find(
      (d: DomainView) => d.hostname === 'shop.example.com',
    ) as DomainView;
    const mine = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains.find((d: DomainView) => d.hostname === 'shop.example.com') as DomainView;
    const token = evil.record.value.slice('slipway-verify='.length);
    const attempts: [string, () => void, string][] = [
      ['no record (NXDOMAIN)', () => dns.remove(evil.record.name), 'no_record'],
      ['a name with no TXT (NODATA)', () => dns.setTxt(evil.record.name, []), 'no_record'],
      ['a wrong value', () => dns.setTxt(evil.record.name, ['slipway-verify=0000']), 'wrong_value'],
      ['the token without its prefix', () => dns.setTxt(evil.record.name, [token]), 'wrong_value'],
      ['the value with different case', () => dns.setTxt(evil.record.name, [evil.record.value.toUpperCase()]), 'wrong_value'],
      ['the value with trailing text', () => dns.setTxt(evil.record.name, [`${evil.record.value} `]), 'wrong_value'],
      ['the other claim’s token', () => dns.setTxt(evil.record.name, [mine.record.value]), 'wrong_value'],
      [
        'the value on the domain itself',
        () => {
          dns.remove(evil.record.name);
          dns.setTxt('shop.example.com', [evil.record.value]);
        },
        'no_record',
      ],
      ['the value on the parent’s challenge name', () => dns.setTxt('_slipway-challenge.example.com', [evil.record.value]), 'no_record'],
      ['the value on a sibling challenge name', () => dns.setTxt('_slipway-challenge.www.shop.example.com', [evil.record.value]), 'no_record'],
      ['a failing resolver (SERVFAIL)', () => dns.fail(evil.record.name), 'lookup_failed'],
    ];
    for (const [what, arrange, reason] of attempts) {
      arrange();
      const res = await verify(attacker, attackerApp, evil.id);
      expect([what, res.status, res.json.code, res.json.reason]).toEqual([what, 422, 'domain_unverified', reason]);
      expect(res.json.record).toEqual(evil.record);
      expect(res.json.error).toContain(reason === 'lookup_failed' ? 'DNS lookup' : evil.record.value);
    }
    expect(await verifiedHolder('shop.example.com')).toEqual([]);
    expect(await trusted('shop.example.com')).toEqual([]);
    const shown = (await attacker.get(`/applications/${attackerApp}/domains`)).json.domains[0] as DomainView;
    expect(shown).toMatchObject({ status: 'pending', checkError: expect.stringContaining('DNS lookup') });
    // A value split into several strings of one record is one value (RFC 7208 joining).
    dns.setTxt(mine.record.name, [[mine.record.value.slice(0, 20), mine.record.value.slice(20)]]);
    const ok = await verify(owner, ownerApp, mine.id);
    expect([ok.status, ok.json.status]).toEqual([200, 'verified']);
  });

  it('the first to verify wins: its origins are trusted; another claim cannot verify while the holder’s value is published', async () => {
    const mine = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains[0] as DomainView;
    const evil = (await attacker.get(`/applications/${attackerApp}/domains`)).json.domains[0] as DomainView;
    expect(mine).toMatchObject({ status: 'verified', trustedOrigins: ['http://shop.example.com', 'https://shop.example.com'] });
    expect(await trusted('shop.example.com')).toEqual([
      { application_id: ownerApp, origin: 'http://shop.example.com' },
      { application_id: ownerApp, origin: 'https://shop.example.com' },
    ]);
    // The attacker cannot get their value published without the holder's going away...
    dns.setTxt(mine.record.name, [mine.record.value, evil.record.value]);
    const refused = await verify(attacker, attackerApp, evil.id);
    expect([refused.status, refused.json.code]).toEqual([409, 'domain_taken']);
    // ...however many other values come first.
    dns.setTxt(mine.record.name, [evil.record.value, ...Array.from({ length: 30 }, (_, i) => `filler-${i}`), mine.record.value]);
    expect((await verify(attacker, attackerApp, evil.id)).json.code).toBe('domain_taken');
    expect(await verifiedHolder('shop.example.com')).toEqual([ownerApp]);
    // ...and a second claim of the same name by the same application is refused, in any spelling.
    for (const spelling of ['shop.example.com', 'SHOP.Example.COM.', 'ｓｈｏｐ．example．com']) {
      const again = await owner.post(`/applications/${ownerApp}/domains`, { hostname: spelling });
      expect([spelling, again.status, again.json.code]).toEqual([spelling, 409, 'domain_taken']);
    }
  });

  it('re-checks on demand: a verified domain whose record is gone stops being trusted; a failed lookup changes nothing', async () => {
    const mine = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains[0] as DomainView;
    dns.fail(mine.record.name);
    expect((await verify(owner, ownerApp, mine.id)).json.reason).toBe('lookup_failed');
    expect(await verifiedHolder('shop.example.com')).toEqual([ownerApp]);
    dns.setTxt(mine.record.name, ['something-else']);
    expect((await verify(owner, ownerApp, mine.id)).status).toBe(422);
    expect(await verifiedHolder('shop.example.com')).toEqual([]);
    expect(await trusted('shop.example.com')).toEqual([]);
    dns.setTxt(mine.record.name, [mine.record.value]);
    expect((await verify(owner, ownerApp, mine.id)).json.status).toBe('verified');
  });

  it('whoever controls the DNS decides: once only another claim’s value is published, that claim takes the name over', async () => {
    const mine = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains[0] as DomainView;
    const evil = (await attacker.get(`/applications/${attackerApp}/domains`)).json.domains[0] as DomainView;
    dns.setTxt(mine.record.name, [evil.record.value]);
    const taken = await verify(attacker, attackerApp, evil.id);
    expect([taken.status, taken.json.status]).toEqual([200, 'verified']);
    expect(await verifiedHolder('shop.example.com')).toEqual([attackerApp]);
    expect((await trusted('shop.example.com')).map((r) => r.application_id)).toEqual([attackerApp, attackerApp]);
    const lost = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains[0] as DomainView;
    expect(lost).toMatchObject({ status: 'pending', trustedOrigins: [], checkError: expect.stringContaining('Another application verified') });
    // And back, when the DNS says so.
    dns.setTxt(mine.record.name, [mine.record.value]);
    expect((await verify(owner, ownerApp, mine.id)).json.status).toBe('verified');
    expect(await verifiedHolder('shop.example.com')).toEqual([ownerApp]);
  });

  it('two claims verifying at the same moment with both values published: exactly one wins (the database decides)', async () => {
    // Several rounds: one interleaving alone may happen to serialise.
    for (let round = 1; round <= 6; round++) {
      const hostname = `race-${round}.example.com`;
      const a = await claim(owner, ownerApp, hostname);
      const b = await claim(attacker, attackerApp, hostname);
      dns.setTxt(a.record.name, [a.record.value, b.record.value]);
      const results = await Promise.all([verify(owner, ownerApp, a.id), verify(attacker, attackerApp, b.id)]);
      expect([hostname, results.map((r) => r.status).sort()]).toEqual([hostname, [200, 409]]);
      expect(await verifiedHolder(hostname)).toHaveLength(1);
    }
  });

  it('normalises case, a final dot, full-width forms and IDNs to one punycode name; the record uses it', async () => {
    const idn = await claim(owner, ownerApp, 'Bücher.Example.');
    expect(idn).toMatchObject({
      hostname: 'xn--bcher-kva.example',
      displayName: 'bücher.example',
      record: { name: '_slipway-challenge.xn--bcher-kva.example' },
    });
    const res = await owner.post(`/applications/${ownerApp}/domains`, { hostname: 'xn--bcher-kva.EXAMPLE' });
    expect([res.status, res.json.code]).toEqual([409, 'domain_taken']);
    dns.setTxt(idn.record.name, [idn.record.value]);
    expect((await verify(owner, ownerApp, idn.id)).json.status).toBe('verified');
    expect((await trusted('xn--bcher-kva.example')).map((r) => r.origin)).toEqual(['http://xn--bcher-kva.example', 'https://xn--bcher-kva.example']);
    for (const bad of [
      'xn--zz.example',
      'https://shop.example.com/x',
      'shop.example.com/x',
      'shop.example.com?x',
      'shop.example.com#x',
      'shop.example.com:443',
      'shop..example.com',
      '_slipway-challenge.example.com',
      '127.0.0.1',
      '',
      'a'.repeat(64) + '.com',
    ]) {
      const r = await owner.post(`/applications/${ownerApp}/domains`, { hostname: bad });
      expect([bad, r.status, r.json.code]).toEqual([bad, 400, 'bad_request']);
    }
  });

  it('refuses outright any spelling of a name under the publishing domains or the platform’s own address', async () => {
    const refused = [
      'localhost',
      'x.localhost',
      'X.LOCALHOST.',
      'ｘ.ｌｏｃａｌｈｏｓｔ',
      'shop.apps.platform.test',
      'deep.shop.APPS.platform.test.',
      'apps.platform.test',
      'signin.platform.test',
      'SignIn.Platform.Test.',
    ];
    for (const hostname of refused) {
      const res = await owner.post(`/applications/${ownerApp}/domains`, { hostname });
      expect([hostname, res.status, res.json.code]).toEqual([hostname, 400, 'bad_request']);
    }
    const rows = await gw.sql.query(`SELECT hostname FROM domains WHERE hostname LIKE '%localhost' OR hostname LIKE '%platform.test'`);
    expect(rows.rows).toEqual([]);
  });

  it('property: every spelling of a verified name is the same claim, and no spelling verifies against the holder', async () => {
    const mine = (await owner.get(`/applications/${ownerApp}/domains`)).json.domains.find((d: DomainView) => d.hostname === 'shop.example.com') as DomainView;
    dns.setTxt(mine.record.name, [mine.record.value]);
    const spelling = fc.tuple(fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }), fc.boolean(), fc.boolean()).map(([upper, dot, wide]) => {
      const cased = [...'shop.example.com'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
      const widened = wide ? [...cased].map((c) => (c === '.' ? '．' : String.fromCharCode(c.charCodeAt(0) + 0xfee0))).join('') : cased;
      return `${widened}${dot ? '.' : ''}`;
    });
    const app = (await attacker.post('/applications', { name: 'Evil Two' })).json.id as string;
    await fc.assert(
      fc.asyncProperty(spelling, async (hostname) => {
        const got = await claim(attacker, app, hostname);
        expect(got.hostname).toBe('shop.example.com');
        const res = await verify(attacker, app, got.id);
        expect([hostname, res.status]).toEqual([hostname, 422]);
        expect((await attacker.delete(`/applications/${app}/domains/${got.id}`)).status).toBe(200);
      }),
      { numRuns: 12 },
    );
    expect(await verifiedHolder('shop.example.com')).toEqual([ownerApp]);
  });
});

describe('custom domains on a platform that does not publish under localhost', () => {
  let gw: GatewayUnderTest;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    gw = await startGateway('domains-prod', {
      BCRYPT_ROUNDS: '4',
      SLIPWAY_DNS_SERVERS: dns.address,
      APPS_DOMAIN: 'apps.platform.test',
      AUTH_PUBLIC_URL: 'http://signin.platform.test:3001',
    });
  });
  afterAll(async () => {
    await gw?.close();
    await dns?.close();
  });

  it('still refuses names under localhost (the developer machine; other applications in development), in any spelling', async () => {
    const owner = new DashboardClient(gw.url);
    expect((await owner.signUp('dev@example.com')).status).toBe(201);
    const app = (await owner.post('/applications', { name: 'Dev' })).json.id;
    for (const hostname of ['x.localhost', 'Other-App.LOCALHOST.', 'ｘ.ｌｏｃａｌｈｏｓｔ', 'a.b.localhost']) {
      const res = await owner.post(`/applications/${app}/domains`, { hostname });
      expect([hostname, res.status, res.json.code]).toEqual([hostname, 400, 'bad_request']);
    }
    // An ordinary name is still accepted on this platform.
    expect((await owner.post(`/applications/${app}/domains`, { hostname: 'shop.example.org' })).status).toBe(201);
    expect((await gw.sql.query(`SELECT hostname FROM domains WHERE hostname LIKE '%localhost'`)).rows).toEqual([]);
  });
});
