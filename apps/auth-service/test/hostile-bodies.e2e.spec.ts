import fc from 'fast-check';
import { startAuthHarness, originOf, TestClient, type AuthHarness } from './harness.js';

/** Any JSON value, and shapes close to the real bodies with hostile field values. */
const hostileValue = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom('', ' ', '\0', 'a@b', '@', 'x'.repeat(5000), '<script>', "' OR 1=1 --", '__proto__', 'constructor', '\u202e', '😀'.repeat(50)),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
);
const signInLike = fc.record(
  {
    email: fc.oneof(fc.emailAddress(), hostileValue),
    password: hostileValue,
    name: hostileValue,
    rememberMe: hostileValue,
    callbackURL: hostileValue,
    __proto__: hostileValue,
  },
  { requiredKeys: [] },
);
const anyBody = fc.oneof(signInLike, fc.jsonValue({ maxDepth: 3 }));

describe('hostile sign-in request bodies (fast-check, real HTTP): never a 500', () => {
  let h: AuthHarness;
  let authUrl: string;
  beforeAll(async () => {
    h = await startAuthHarness('hostilebodies', { AUTH_RATE_LIMIT_SIGN_IN_MAX: '100000' });
    authUrl = (await h.createTenant('hostile')).authUrl;
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each(['/sign-in/email', '/sign-up/email', '/token', '/get-session', '/sign-out'])('POST %s with arbitrary JSON answers below 500', async (path) => {
    const client = new TestClient(authUrl, originOf('hostile'));
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        const response = await client.post(path, body);
        const text = await response.text();
        expect({ path, status: response.status < 500 ? 'ok' : response.status, text: response.status < 500 ? '' : text }).toEqual({
          path,
          status: 'ok',
          text: '',
        });
      }),
      { numRuns: path.startsWith('/sign-') ? 60 : 25 },
    );
  });

  // Found by the property above (name "\u0000" on sign-up was a 500): Postgres text cannot hold a NUL.
  it('a NUL anywhere in a request (a field, a nested key, the query string) is a 400 VALIDATION_ERROR naming where, and nothing is stored', async () => {
    const client = new TestClient(authUrl, originOf('hostile'));
    const cases: [Response, string][] = [
      [await client.post('/sign-up/email', { email: 'nul-name@example.com', password: 'correct horse battery', name: '\u0000' }), 'body.name'],
      [await client.post('/sign-up/email', { email: 'nul\u0000@example.com', password: 'correct horse battery', name: 'N' }), 'body.email'],
      [await client.post('/sign-in/email', { email: 'x@example.com', password: 'p', extra: { 'k\u0000': 1 } }), 'body.extra.k\\0'],
      [await client.get('/get-session?token=%00'), 'url'],
    ];
    for (const [response, where] of cases) {
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 400,
        body: expect.objectContaining({ code: 'VALIDATION_ERROR', message: `[${where}] must not contain the NUL character (U+0000)` }),
      });
    }
    // Refused before the handler: the account was not made, so signing in to it fails as for anyone unknown.
    expect((await client.signIn('nul-name@example.com')).status).toBe(401);
  });

  it('raw bodies that are not JSON (or claim another type) answer < 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 300 }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', ''),
        async (raw, type) => {
          const response = await fetch(`${authUrl}/sign-in/email`, {
            method: 'POST',
            headers: { origin: originOf('hostile'), ...(type ? { 'content-type': type } : {}) },
            body: raw,
          });
          await response.body?.cancel();
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: 60 },
    );
  });
});
