import { SessionReadsFastPath } from '../src/sessions/session-reads.fast-path.js';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const SESSION_MAX = 40;

/**
 * GET get-session and token are answered by a Node listener in front of Express. A query
 * string sends the same request through Express and Nest's router instead, so each answer
 * can be compared with the one the Nest routes give.
 */
describe('session reads fast path (answers exactly as the Nest routes do)', () => {
  let h: AuthHarness;
  let shop: { authUrl: string };
  let busy: { authUrl: string };
  let fastPath: SessionReadsFastPath;

  beforeAll(async () => {
    h = await startAuthHarness('authfastpath', { AUTH_RATE_LIMIT_SESSION_MAX: String(SESSION_MAX) });
    shop = await h.createTenant('shop');
    busy = await h.createTenant('busy');
    fastPath = h.app.get(SessionReadsFastPath);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function fetchAnswer(url: string, headers: Record<string, string>): Promise<Answer> {
    const res = await fetch(url, { headers, redirect: 'manual' });
    const all: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      if (name !== 'date') all[name] = value;
    });
    return { status: res.status, headers: all, body: await res.text() };
  }

  const issuedAt = (a: Answer) => {
    const jwt = a.headers['set-auth-jwt'] ?? (a.body.startsWith('{"token":"') ? (JSON.parse(a.body) as { token: string }).token : undefined);
    return jwt ? (JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { iat: number }).iat : 0;
  };

  /** The fast path's answer and Express's, taken in the same second (JWTs carry `iat`). */
  async function both(url: string, headers: Record<string, string> = {}): Promise<{ fast: Answer; nest: Answer }> {
    for (;;) {
      const before = fastPath.served;
      const fast = await fetchAnswer(url, headers);
      expect(fastPath.served).toBe(before + 1);
      const nest = await fetchAnswer(`${url}?via=nest`, headers);
      expect(fastPath.served).toBe(before + 1);
      if (issuedAt(fast) === issuedAt(nest)) return { fast, nest };
    }
  }

  it('answers a signed-in get-session and token with the same status, headers (CORS, ETag, set-auth-jwt) and body', async () => {
    const alice = new TestClient(shop.authUrl, originOf('shop'));
    expect((await alice.signUp('alice@example.com')).status).toBe(200);
    const headers = { cookie: [...alice.cookies].map(([k, v]) => `${k}=${v}`).join('; '), origin: originOf('shop') };

    const session = await both(`${shop.authUrl}/get-session`, headers);
    expect(session.fast).toEqual(session.nest);
    expect(session.fast.status).toBe(200);
    expect(session.fast.headers).toMatchObject({
      'access-control-allow-origin': originOf('shop'),
      'access-control-allow-credentials': 'true',
      'cache-control': 'no-store',
      'content-type': 'application/json; charset=utf-8',
      vary: 'Origin',
    });
    expect(session.fast.headers['set-auth-jwt']).toMatch(/^ey/);
    expect(JSON.parse(session.fast.body)).toMatchObject({ user: { email: 'alice@example.com' }, session: { ipAddress: '127.0.0.1' } });

    const token = await both(`${shop.authUrl}/token`, headers);
    expect(token.fast).toEqual(token.nest);
    expect(JSON.parse(token.fast.body)).toEqual({ token: expect.stringMatching(/^ey/) });
  });

  it('answers no session, a forged cookie and an unknown application alike', async () => {
    const none = await both(`${shop.authUrl}/get-session`);
    expect(none.fast).toEqual(none.nest);
    expect(none.fast.body).toBe('null');

    const forged = await both(`${shop.authUrl}/get-session`, { cookie: '__Secure-slipway.session_token=abc.Zm9yZ2Vk' });
    expect(forged.fast).toEqual(forged.nest);
    expect(forged.fast.body).toBe('null');
    expect(forged.fast.headers['set-cookie']).toMatch(/^__Secure-slipway\.session_token=; Max-Age=0; Path=\/a\/shop;/);

    const unauthorized = await both(`${shop.authUrl}/token`);
    expect(unauthorized.fast).toEqual(unauthorized.nest);
    expect(unauthorized.fast.status).toBe(401);
    expect(JSON.parse(unauthorized.fast.body)).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' });

    const unknown = await both(`${h.url}/a/nobody-here/get-session`);
    expect(unknown.fast).toEqual(unknown.nest);
    expect(unknown.fast.status).toBe(404);
  });

  it('counts session reads in the shared bucket on both paths and answers 429 alike', async () => {
    for (let i = 0; i < SESSION_MAX - 1; i++) expect((await fetch(`${busy.authUrl}/get-session`)).status).toBe(200);
    expect((await fetch(`${busy.authUrl}/token?via=nest`)).status).toBe(401);
    const before = fastPath.served;
    const fast = await fetchAnswer(`${busy.authUrl}/get-session`, {});
    const nest = await fetchAnswer(`${busy.authUrl}/get-session?via=nest`, {});
    expect(fastPath.served).toBe(before + 1);
    expect(fast.status).toBe(429);
    expect(Number(fast.headers['x-retry-after'])).toBeGreaterThanOrEqual(1);
    expect(fast.headers['retry-after']).toBe(fast.headers['x-retry-after']);
    const withoutWait = ({ headers, ...rest }: Answer) => ({ ...rest, headers: { ...headers, 'x-retry-after': '', 'retry-after': '', etag: '' } });
    expect(withoutWait(fast)).toEqual(withoutWait(nest));
    expect(JSON.parse(fast.body)).toEqual({ message: 'Too many requests. Please try again later.' });
  });

  it('leaves conditional requests, other methods and other paths to Express', async () => {
    const before = fastPath.served;
    expect((await fetch(`${shop.authUrl}/get-session`, { headers: { 'if-none-match': 'W/"4-x"' } })).status).toBe(200);
    // A trailing slash is another spelling: it goes past the fast path and is refused with a 404 (issue 20).
    expect((await fetch(`${shop.authUrl}/get-session/`)).status).toBe(404);
    expect((await fetch(`${shop.authUrl}/get-session?via=express`)).status).toBe(200);
    expect((await fetch(`${shop.authUrl}/ok`)).status).toBe(200);
    expect(fastPath.served).toBe(before);
  });
});
