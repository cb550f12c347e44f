import { issueToken } from '@slipway/crypto';
import { waitFor } from '@slipway/testing';
import { filesForm, multipart, send } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const UNAUTHORIZED = { error: expect.any(String), code: 'unauthorized', documentation: 'http://localhost:3000/api/v1#error-unauthorized' };

describe('project API keys on every /api/v1 endpoint (passport bearer, real HTTP and Postgres)', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  beforeAll(async () => {
    gw = await startGateway('auth');
    app = await gw.createApplication();
  });
  afterAll(async () => {
    await gw.close();
  });

  const form = multipart(filesForm({ 'a.txt': 'a' }));
  const endpoints = [
    ['POST', '/api/v1/deploy', form.body, form.contentType],
    ['GET', '/api/v1/deployments/00000000-0000-4000-8000-000000000000', undefined, undefined],
    ['PUT', '/api/v1/secrets', Buffer.from('{"secrets":{}}'), 'application/json'],
    ['GET', '/api/v1/secrets', undefined, undefined],
  ] as const;
  const call = (method: string, path: string, body: Buffer | undefined, type: string | undefined, authorization?: string) =>
    send(`${gw.url}${path}`, { method, body, headers: { ...(type ? { 'content-type': type } : {}), ...(authorization ? { authorization } : {}) } });

  const unknownKey = issueToken('api_key').token;
  it.each([
    ['missing', undefined],
    ['not Bearer', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['malformed', 'Bearer not-a-key'],
    ['a personal access token', `Bearer ${issueToken('personal_access_token').token}`],
    ['unknown', `Bearer ${unknownKey}`],
    ['empty bearer', 'Bearer '],
  ])('answers 401 unauthorized for a %s key on every endpoint', async (_what, authorization) => {
    for (const [method, path, body, type] of endpoints) {
      const response = await call(method, path, body, type, authorization);
      expect({ endpoint: `${method} ${path}`, status: response.status, body: response.json }).toEqual({
        endpoint: `${method} ${path}`,
        status: 401,
        body: UNAUTHORIZED,
      });
      expect(response.headers['www-authenticate']).toBe('Bearer realm="slipway"');
    }
  });

  it('takes a key only from the Authorization header, never the query string', async () => {
    const response = await send(`${gw.url}/api/v1/secrets?access_token=${encodeURIComponent(app.key)}`);
    expect(response.status).toBe(401);
    expect(response.json).toEqual(UNAUTHORIZED);
  });

  it('a key whose secret part is wrong is refused (same prefix, different hash)', async () => {
    const forged = `${app.key.slice(0, app.key.lastIndexOf('_') + 1)}${'A'.repeat(43)}`;
    const response = await call('GET', '/api/v1/secrets', undefined, undefined, `Bearer ${forged}`);
    expect(response.status).toBe(401);
  });

  it('accepts a valid key, records its use, and refuses it on the very next request once revoked', async () => {
    const mine = await gw.createApplication();
    const ok = await call('GET', '/api/v1/secrets', undefined, undefined, `Bearer ${mine.key}`);
    expect(ok.status).toBe(200);
    // last_used_at is written off the request path, so poll for it.
    await waitFor(async () => (await gw.sql.query('SELECT last_used_at FROM api_keys WHERE id = $1', [mine.keyId])).rows[0].last_used_at !== null, {
      what: 'last_used_at',
      timeoutMs: 5000,
    });
    await gw.sql.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [mine.keyId]);
    for (const [method, path, body, type] of endpoints) {
      const response = await call(method, path, body, type, `Bearer ${mine.key}`);
      expect({ endpoint: `${method} ${path}`, status: response.status, body: response.json }).toEqual({
        endpoint: `${method} ${path}`,
        status: 401,
        body: UNAUTHORIZED,
      });
    }
  });

  it('needs no key for the contract', async () => {
    expect((await send(`${gw.url}/api/v1`)).status).toBe(200);
    expect((await send(`${gw.url}/api/v1/openapi.json`)).status).toBe(200);
  });

  it('answers unknown routes under /api/v1 with 404 not_found in the contract shape', async () => {
    const response = await send(`${gw.url}/api/v1/applications`);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({
      error: 'No route for GET /api/v1/applications',
      code: 'not_found',
      documentation: 'http://localhost:3000/api/v1#error-not_found',
    });
  });
});
