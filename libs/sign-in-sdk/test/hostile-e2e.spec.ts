import { rawRequest, seededRandom } from './support/raw-http.js';
import { startShopOnPlatform, type ShopOnPlatform } from './support/shop-on-platform.js';

const HOST = '__Host-slipway.session_token';
const OLD = '__Secure-slipway.session_token';

/**
 * Issue 20 through the library on the app's own host: other spellings of /api/auth/* behave as the
 * service's own (items 1), and the session cookie cannot be tossed in by a sibling host (item 3).
 * The gateway and auth-service run as processes; the shop fixture runs this library as a process.
 */
describe('@slipway/sign-in-sdk against hostile input (real processes, real HTTP)', () => {
  let s: ShopOnPlatform;
  const password = 'a long passphrase';
  const values = { victim: '', attacker: '' };

  const post = (target: string, address: string, body: unknown, cookie?: string) =>
    rawRequest(
      s.app.url,
      'POST',
      target,
      { origin: s.app.origin, 'content-type': 'application/json', 'x-forwarded-for': address, ...(cookie ? { cookie } : {}) },
      JSON.stringify(body),
    );
  const me = async (cookie: string) => {
    const res = await rawRequest(s.app.url, 'GET', '/me', { cookie });
    return res.status === 200 ? (JSON.parse(res.body) as { email: string }).email : null;
  };
  const viaProxy = async (cookie: string) => {
    const res = await rawRequest(s.app.url, 'GET', '/api/auth/get-session', { cookie, origin: s.app.origin });
    const body = JSON.parse(res.body) as { user: { email: string } } | null;
    return { email: body?.user.email ?? null, setCookies: res.setCookies };
  };

  beforeAll(async () => {
    s = await startShopOnPlatform('authserverhostile', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '5', AUTH_RATE_LIMIT_SIGN_IN_WINDOW_SECONDS: '300' });
    for (const who of ['victim', 'attacker'] as const) {
      const res = await post('/api/auth/sign-up/email', `198.51.100.${who === 'victim' ? 1 : 2}`, { email: `${who}@example.com`, password, name: who });
      expect(res.status).toBe(200);
      const cookie = res.setCookies.find((c) => c.startsWith(`${HOST}=`))!;
      // First-party and host-only: Secure, Path=/, no Domain (the only way a browser takes __Host-).
      expect(cookie).toMatch(/; Path=\/; /);
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).not.toMatch(/Domain=/i);
      values[who] = cookie.split(';')[0]!.slice(HOST.length + 1);
    }
  }, 90_000);
  afterAll(async () => {
    await s?.close();
  });

  it('after 429, no spelling of /api/auth/sign-in/email through the app signs in; each is 429 or a 404 {code, message}', async () => {
    const address = '192.0.2.77';
    for (let i = 0; i < 5; i++)
      expect((await post('/api/auth/sign-in/email', address, { email: 'victim@example.com', password: 'wrong password!' })).status).toBe(401);
    expect((await post('/api/auth/sign-in/email', address, { email: 'victim@example.com', password })).status).toBe(429);
    const spellings = [
      '/api/auth/SIGN-IN/EMAIL',
      '/api/auth/Sign-In/Email',
      '/API/AUTH/sign-in/email',
      '/Api/Auth/sign-in/email',
      '/api/auth/sign-in/email/',
      '/api/auth//sign-in/email',
      '/api/auth/sign-in//email',
      '/api/auth/sign-in/%65mail',
      '/api/auth/%73ign-in/email',
      '/api/auth/sign-in%2femail',
      '/api/auth/sign-in/email;x=1',
      '/api/auth/sign-in;/email',
      '/api/auth/./sign-in/email',
      '/api/auth/x/../sign-in/email',
      '/api/auth/%2e/sign-in/email',
      '/api/auth/x/%2e%2e/sign-in/email',
      '/api/auth/sign-in\\email',
      '/api/auth/sign-in/email%20',
      '/api/auth/sign-in/email.',
      '/api/auth/sign-in/email?x=1',
    ];
    const outcomes: string[] = [];
    for (const target of spellings) {
      const res = await post(target, address, { email: 'victim@example.com', password });
      outcomes.push(`${target} ${res.status}`);
      if (res.status === 404 && res.body) expect([target, JSON.parse(res.body)]).toEqual([target, { code: 'NOT_FOUND', message: expect.any(String) }]);
      expect(res.setCookies.filter((c) => c.startsWith(`${HOST}=`) && !/Max-Age=0/.test(c))).toEqual([]);
    }
    expect(outcomes.filter((o) => !/ (404|429)$/.test(o))).toEqual([]);
    // From fresh addresses (no limit in the way), only canonical spellings reach the service's handler.
    // (What the URL parser resolves to the canonical path — dot segments, %2e, `\`, a query — is that path.)
    let n = 0;
    for (const target of spellings.filter((t) => !/(\.\.|\/\.\/|\?|%2e|\\)/.test(t))) {
      const res = await post(target, `203.0.113.${++n}`, { email: 'victim@example.com', password });
      expect([target, res.status]).toEqual([target, 404]);
    }
  });

  it('a tossed __Secure- cookie never signs the victim in as the attacker; two __Host- cookies mean signed out and cleared', async () => {
    // Victim signed out, attacker's own (valid) cookie tossed under the old name from a sibling host.
    expect(await me(`${OLD}=${values.attacker}`)).toBeNull();
    const tossed = await viaProxy(`${OLD}=${values.attacker}`);
    expect(tossed.email).toBeNull();
    expect(tossed.setCookies).toContain(`${OLD}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`);
    // Victim signed in: the tossed cookie, first or last, changes nothing.
    for (const cookie of [`${OLD}=${values.attacker}; ${HOST}=${values.victim}`, `${HOST}=${values.victim}; ${OLD}=${values.attacker}`]) {
      expect(await me(cookie)).toBe('victim@example.com');
      expect((await viaProxy(cookie)).email).toBe('victim@example.com');
    }
    // Two of the __Host- name (not something a browser sends for one host): ambiguous, in either order.
    for (const cookie of [`${HOST}=${values.attacker}; ${HOST}=${values.victim}`, `${HOST}=${values.victim}; ${HOST}=${values.attacker}`]) {
      expect(await me(cookie)).toBeNull();
      const res = await viaProxy(cookie);
      expect(res.email).toBeNull();
      expect(res.setCookies).toContain(`${HOST}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`);
    }
  });

  it('property (seeded): getSession and the proxied get-session see a session only for exactly one valid __Host- cookie', async () => {
    const seed = Number(process.env['COOKIE_PROPERTY_SEED'] ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const names = [
      HOST,
      HOST,
      HOST,
      ` ${HOST}`,
      `${HOST}  `,
      OLD,
      OLD,
      '__host-slipway.session_token',
      '__HOST-slipway.session_token',
      '__Secure-slipway.SESSION_TOKEN',
      'slipway.session_token',
      'app_session',
    ] as const;
    type Value = 'victim' | 'attacker' | 'garbage' | 'quoted';
    const render = (v: Value) => (v === 'victim' || v === 'attacker' ? values[v] : v === 'quoted' ? `"${values.victim}"` : 'x.y');
    for (let run = 0; run < 60; run++) {
      const entries = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
        name: pick(names),
        value: pick<Value>(['victim', 'attacker', 'garbage', 'quoted']),
        pad: pick(['', ' ', '  ']),
      }));
      const header = entries.map((e) => `${e.name}=${e.pad}${render(e.value)}${e.pad}`).join(pick([';', '; ', ' ;  ']));
      const exact = entries.filter((e) => e.name.trim() === HOST);
      const only = exact.length === 1 ? exact[0]!.value : null;
      const expected = only === 'victim' || only === 'attacker' ? `${only}@example.com` : null;
      const context = `seed ${seed} run ${run}: ${header}`;
      expect([context, await me(header)]).toEqual([context, expected]);
      expect([context, (await viaProxy(header)).email]).toEqual([context, expected]);
    }
  });
});
