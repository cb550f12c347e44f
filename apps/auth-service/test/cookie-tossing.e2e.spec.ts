import fc from 'fast-check';
import { rawRequest } from '@slipway/testing';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

const SESSION = '__Secure-slipway.session_token';

/**
 * Issue 20, item 3 on the service's own host: the session cookie is path-scoped `__Secure-` (tenants
 * share the host), so a sibling host under a shared parent domain can toss a second one with a
 * longer path, which the browser sends first. A request with two is signed out, never the first's.
 */
describe('duplicate session cookies on the service (real HTTP, Postgres, Redis)', () => {
  let h: AuthHarness;
  let shop: { authUrl: string };
  const values: Record<'victim' | 'attacker', string> = { victim: '', attacker: '' };

  /** GET get-session with exactly this Cookie header; `fast` takes the plain-Node fast path, else Nest. */
  const session = async (cookie: string, fast: boolean) => {
    const res = await rawRequest(h.url, 'GET', `/a/shop/get-session${fast ? '' : '?via=nest'}`, { cookie });
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { user: { email: string } } | null;
    return {
      email: body?.user.email ?? null,
      cleared: res.setCookies.some((c) => c.startsWith(`${SESSION}=;`) && /Max-Age=0/.test(c) && c.includes('Path=/a/shop')),
    };
  };

  beforeAll(async () => {
    h = await startAuthHarness('authtoss');
    shop = await h.createTenant('shop');
    for (const who of ['victim', 'attacker'] as const) {
      const c = new TestClient(shop.authUrl, originOf('shop'));
      expect((await c.signUp(`${who}@example.com`)).status).toBe(200);
      values[who] = c.cookies.get(SESSION)!;
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the tossed cookie first, or last, signs nobody in; the answer clears the cookie', async () => {
    for (const fast of [true, false]) {
      expect(await session(`${SESSION}=${values.victim}`, fast)).toEqual({ email: 'victim@example.com', cleared: false });
      expect(await session(`${SESSION}=${values.attacker}; ${SESSION}=${values.victim}`, fast)).toEqual({ email: null, cleared: true });
      expect(await session(`${SESSION}=${values.victim}; ${SESSION}=${values.attacker}`, fast)).toEqual({ email: null, cleared: true });
      expect(await session(`${SESSION}=${values.victim}; ${SESSION}=${values.victim}`, fast)).toEqual({ email: null, cleared: true });
    }
    // Every route that reads the session sees none: a change is refused, nothing is revoked.
    const res = await rawRequest(
      h.url,
      'POST',
      '/a/shop/revoke-other-sessions',
      { origin: originOf('shop'), 'content-type': 'application/json', cookie: `${SESSION}=${values.attacker}; ${SESSION}=${values.victim}` },
      '{}',
    );
    expect([res.status, JSON.parse(res.body)]).toEqual([401, { code: 'UNAUTHORIZED', message: expect.any(String) }]);
    expect(res.setCookies).toEqual([`${SESSION}=; Max-Age=0; Path=/a/shop; HttpOnly; Secure; SameSite=Lax`]);
    // Both sessions are still there: nothing was revoked on the victim's behalf nor the attacker's.
    expect((await session(`${SESSION}=${values.victim}`, true)).email).toBe('victim@example.com');
    expect((await session(`${SESSION}=${values.attacker}`, false)).email).toBe('attacker@example.com');
  });

  it('property: a session exists only with exactly one cookie of exactly that name and a valid value', async () => {
    type Value = 'victim' | 'attacker' | 'garbage' | 'quoted' | 'empty';
    const names = fc.constantFrom(
      SESSION,
      SESSION,
      SESSION,
      ` ${SESSION}`,
      `${SESSION} `,
      '__secure-slipway.session_token',
      '__SECURE-slipway.session_token',
      '__Host-slipway.session_token',
      'slipway.session_token',
      '__Secure-slipway.session_token2',
      'other',
    );
    const entry = fc.record({
      name: names,
      value: fc.constantFrom<Value>('victim', 'attacker', 'garbage', 'quoted', 'empty'),
      pad: fc.constantFrom('', ' ', '  '),
    });
    const render = (v: Value) => (v === 'victim' || v === 'attacker' ? values[v] : v === 'quoted' ? `"${values.victim}"` : v === 'garbage' ? 'x.y' : '');
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 5 }), fc.boolean(), async (entries, fast) => {
        const header = entries.map((e) => `${e.name}=${e.pad}${render(e.value)}${e.pad}`).join(fast ? '; ' : ';');
        const exact = entries.filter((e) => e.name.trim() === SESSION);
        const only = exact.length === 1 ? exact[0]!.value : null;
        const expected = only === 'victim' || only === 'attacker' ? `${only}@example.com` : null;
        // get-session also clears a session cookie that leads to no session (as before).
        const cleared = exact.length > 1 || (expected === null && header.includes('slipway.session_token='));
        expect([header, await session(header, fast)]).toEqual([header, { email: expected, cleared }]);
      }),
      { numRuns: 120 },
    );
  });
});
