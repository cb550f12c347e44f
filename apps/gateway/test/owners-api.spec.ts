import { randomUUID } from 'node:crypto';
import { DashboardClient, DASHBOARD_ORIGIN } from './support/dashboard-client.js';
import { send, type HttpResult } from './support/http.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

/**
 * The owners' API (/dashboard/api) from the attacker's position: a project API key of one
 * application, and a personal access token of another owner, against every route that names an
 * application — the routes taken from the API's own OpenAPI document, so a route added later is
 * covered too.
 */
describe("owners' API: session, personal access token or project API key (real HTTP, Postgres)", () => {
  let gw: GatewayUnderTest;
  let ada: DashboardClient;
  let eve: DashboardClient;
  let shop: string;
  let blog: string;
  let shopKey: string;
  let blogKey: string;
  let adaToken: string;
  let eveToken: string;
  let document: { paths: Record<string, Record<string, { security: Record<string, unknown>[] }>> };

  const bearer = (credential: string, method: string, path: string, body?: unknown): Promise<HttpResult> =>
    send(`${gw.url}/dashboard/api${path}`, {
      method,
      headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });

  /** Every route of the document that names an application, with `appId` filled in and any other id random. */
  const applicationRoutes = (appId: string) =>
    Object.entries(document.paths)
      .filter(([path]) => path.includes('{appId}'))
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => ({
          method: method.toUpperCase(),
          path: path
            .slice('/dashboard/api'.length)
            .replace('{appId}', appId)
            .replace(/\{\w+\}/g, () => randomUUID()),
        })),
      );

  /** Status and message: a 404 must be the guard's, not the router's (an unknown path). */
  const answer = (res: HttpResult) => `${res.status} ${(res.json as { error?: string } | undefined)?.error ?? res.text.slice(0, 80)}`;

  beforeAll(async () => {
    gw = await startGateway('owners-api', { BCRYPT_ROUNDS: '4' });
    ada = new DashboardClient(gw.url);
    eve = new DashboardClient(gw.url);
    expect((await ada.signUp('ada@example.com')).status).toBe(201);
    expect((await eve.signUp('eve@example.com')).status).toBe(201);
    shop = (await ada.post('/applications', { name: 'Shop' })).json.id;
    blog = (await ada.post('/applications', { name: 'Blog' })).json.id;
    shopKey = (await ada.post(`/applications/${shop}/api-keys`, { name: 'ci' })).json.key;
    blogKey = (await ada.post(`/applications/${blog}/api-keys`, { name: 'ci' })).json.key;
    adaToken = (await ada.post('/tokens', { name: 'laptop' })).json.token;
    eveToken = (await eve.post('/tokens', { name: 'laptop' })).json.token;
    expect([shopKey, blogKey, adaToken, eveToken].every(Boolean)).toBe(true);
    document = (await send(`${gw.url}/dashboard/api/openapi.json`)).json;
  });
  afterAll(async () => {
    await gw.close();
  });

  it('publishes its OpenAPI document (every /dashboard/api route, who may call it), linked from GET /api/v1', async () => {
    const contract = (await send(`${gw.url}/api/v1`)).json;
    expect(contract.ownersApi.openApi).toBe('http://localhost:3000/dashboard/api/openapi.json');
    expect(document.paths['/dashboard/api/applications/{appId}/releases']!['get']!.security).toEqual([
      { session: [] },
      { ownerToken: [] },
      { projectApiKey: [] },
    ]);
    expect(document.paths['/dashboard/api/applications/{appId}/rollback']!['post']).toMatchObject({
      requestBody: expect.anything(),
      responses: { '200': expect.anything(), '422': expect.anything() },
    });
    expect(document.paths['/dashboard/api/applications/{appId}/releases/{releaseId}/live']!['post']).toBeDefined();
    expect(document.paths['/dashboard/api/applications/{appId}/metrics']!['get']).toMatchObject({
      summary: expect.stringContaining('`slipway metrics`'),
      security: [{ session: [] }, { ownerToken: [] }, { projectApiKey: [] }],
    });
    expect(document.paths['/dashboard/api/tokens']!['post']!.security).toEqual([{ session: [] }]);
    expect(document.paths['/dashboard/api/applications/{appId}/api-keys']!['get']!.security).toEqual([{ session: [] }, { ownerToken: [] }]);
    // A route count far from the one written here means the discovery broke, not that routes moved.
    expect(applicationRoutes(shop).length).toBeGreaterThan(20);
  });

  it("answers 404 to a project API key on every route of another application (the same owner's)", async () => {
    const answers = await Promise.all(
      applicationRoutes(blog).map(
        async ({ method, path }) =>
          `${method} ${path.replace(blog, ':blog')} → ${answer(await bearer(shopKey, method, path, method === 'GET' || method === 'DELETE' ? undefined : {}))}`,
      ),
    );
    expect(answers.filter((line) => !line.endsWith('→ 404 No such application.'))).toEqual([]);
    const one = await bearer(shopKey, 'GET', `/applications/${blog}/releases`);
    expect(one.json).toMatchObject({ code: 'not_found', documentation: expect.any(String), error: 'No such application.' });
  });

  it("answers 404 to another owner's personal access token on every route of Ada's applications", async () => {
    const answers = await Promise.all(
      applicationRoutes(shop).map(
        async ({ method, path }) =>
          `${method} ${path.replace(shop, ':shop')} → ${answer(await bearer(eveToken, method, path, method === 'GET' || method === 'DELETE' ? undefined : {}))}`,
      ),
    );
    expect(answers.filter((line) => !line.endsWith('→ 404 No such application.'))).toEqual([]);
  });

  it('lets a project API key reach its own application, list only it, and nothing owner-wide (403)', async () => {
    const releases = await bearer(shopKey, 'GET', `/applications/${shop}/releases`);
    expect([releases.status, releases.json]).toEqual([200, { releases: [] }]);
    const apps = await bearer(shopKey, 'GET', '/applications');
    expect(apps.json.applications.map((a: { id: string }) => a.id)).toEqual([shop]);
    for (const [method, path] of [
      ['GET', '/platform-status'],
      ['GET', '/session'],
      ['POST', '/applications'],
      ['GET', `/applications/${shop}/api-keys`],
      ['POST', `/applications/${shop}/api-keys`],
      ['GET', '/tokens'],
    ] as const) {
      const res = await bearer(shopKey, method, path, method === 'POST' ? { name: 'x' } : undefined);
      expect([`${method} ${path}`, res.status, res.json.code]).toEqual([`${method} ${path}`, 403, 'forbidden']);
    }
  });

  it("lets a personal access token reach all of its owner's applications, but not mint tokens", async () => {
    const apps = await bearer(adaToken, 'GET', '/applications');
    expect(apps.json.applications.map((a: { id: string }) => a.id).sort()).toEqual([shop, blog].sort());
    expect((await bearer(adaToken, 'GET', `/applications/${blog}/releases`)).status).toBe(200);
    expect((await bearer(adaToken, 'GET', '/session')).json).toMatchObject({ email: 'ada@example.com' });
    const mint = await bearer(adaToken, 'POST', '/tokens', { name: 'more' });
    expect([mint.status, mint.json.code]).toEqual([403, 'forbidden']);
  });

  it('takes bearer writes without the CSRF header, and still refuses a cookie write without it', async () => {
    const byKey = await bearer(shopKey, 'PUT', `/applications/${shop}/secrets`, { secrets: { FROM_KEY: '1' } });
    expect([byKey.status, byKey.json]).toEqual([200, expect.objectContaining({ names: expect.arrayContaining(['FROM_KEY']) })]);
    const byToken = await bearer(adaToken, 'PUT', `/applications/${blog}/secrets`, { secrets: { FROM_TOKEN: '1' } });
    expect(byToken.status).toBe(200);
    const cookieOnly = await ada.request('PUT', `/applications/${shop}/secrets`, { secrets: { FROM_COOKIE: '1' } }, {});
    expect([cookieOnly.status, cookieOnly.json.code]).toEqual([403, 'forbidden']);
    const noHeader = await ada.request('PUT', `/applications/${shop}/secrets`, { secrets: { FROM_COOKIE: '1' } }, { origin: DASHBOARD_ORIGIN });
    expect(noHeader.status).toBe(403);
    expect((await ada.get(`/applications/${shop}/secrets`)).json.names).not.toContain('FROM_COOKIE');
  });

  it('refuses unknown, malformed and revoked bearer credentials (401 in the error shape)', async () => {
    for (const header of ['Bearer slw_key_nonsense', 'Bearer slw_pat_nonsense', 'Basic abc', 'Bearer ']) {
      const res = await send(`${gw.url}/dashboard/api/applications`, { headers: { authorization: header } });
      expect([header, res.status, res.json.code, typeof res.json.error]).toEqual([header, 401, 'unauthorized', 'string']);
    }
    const revoked = (await ada.post(`/applications/${blog}/api-keys`, { name: 'gone' })).json;
    expect((await ada.delete(`/applications/${blog}/api-keys/${revoked.id}`)).status).toBe(200);
    expect((await bearer(revoked.key, 'GET', `/applications/${blog}/releases`)).status).toBe(401);
  });

  it('answers a rollback with nothing to roll back to with not_found, in the error shape', async () => {
    const res = await bearer(shopKey, 'POST', `/applications/${shop}/rollback`, {});
    expect([res.status, res.json.code]).toEqual([404, 'not_found']);
    const promote = await bearer(shopKey, 'POST', `/applications/${shop}/releases/${randomUUID()}/live`);
    expect([promote.status, promote.json.code]).toEqual([404, 'not_found']);
  });
});
