/**
 * Contract part B with a real deploy: switch sign-in on with the owner's token, deploy a Node app
 * that uses the server library (beta), sign up and in through the app's own address on the edge,
 * and read a join between the app's own table and service_auth.users over the injected DATABASE_URL.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Platform, ROOT, type Account, type HttpResult } from './support/platform.js';

/** The shop fixture of libs/sign-in-sdk, packaged as a user would: the library vendored, real npm dependencies. */
async function shopProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-shop-'));
  const server = await readFile(join(ROOT, 'libs/sign-in-sdk/test/fixtures/shop/server.mjs'), 'utf8');
  await writeFile(join(dir, 'server.mjs'), server.replace("from '@slipway/sign-in-sdk'", "from './vendor/sign-in-sdk/index.js'"));
  await mkdir(join(dir, 'vendor'));
  await cp(join(ROOT, 'libs/sign-in-sdk/dist'), join(dir, 'vendor/sign-in-sdk'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  const manifest = {
    name: 'shop',
    private: true,
    type: 'module',
    scripts: { start: 'node server.mjs' },
    engines: { node: '>=20' },
    dependencies: { express: '5.3.0', jose: '6.2.17', pg: '8.16.3' },
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

class Visitor {
  private readonly cookies = new Map<string, string>();
  constructor(
    private readonly platform: Platform,
    private readonly slug: string,
    private readonly address: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<HttpResult & { json: () => any }> {
    const headers: Record<string, string> = { origin: `http://${this.slug}.localhost:${this.platform.ports.edge}`, 'x-forwarded-for': this.address };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookies.size) headers['cookie'] = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    const res = await this.platform.viaEdge(this.slug, path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const setCookies = res.headers['set-cookie'] ?? [];
    for (const cookie of Array.isArray(setCookies) ? setCookies : [setCookies]) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      if (pair!.slice(eq + 1)) this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      else this.cookies.delete(pair!.slice(0, eq));
    }
    return { ...res, json: () => JSON.parse(res.body) };
  }
}

describe('sign-in, switched on and used by a deployed app', () => {
  let platform: Platform;
  let account: Account;
  let shop: string;

  beforeAll(async () => {
    platform = await Platform.start('e2e-signin');
    account = await platform.bootstrap('owner@example.com', 'Tea Shop');
    shop = await shopProject();
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    if (shop) await rm(shop, { recursive: true, force: true });
  });

  it('switches on once (also concurrently), injects the variables, and the app signs people in and joins on service_auth.users', async () => {
    const enable = () =>
      fetch(`http://127.0.0.1:${platform.ports.gateway}/api/v1/auth?applicationId=${account.applicationId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.ownerToken}` },
      });
    const first = await enable();
    expect(first.status).toBe(201);
    const record = (await first.json()) as { applicationId: string; baseUrl: string; trustedOrigins: string[] };
    expect(record).toMatchObject({ applicationId: account.applicationId, baseUrl: `http://127.0.0.1:${platform.ports.auth}/a/${account.slug}` });
    expect(record.trustedOrigins).toContain(`http://${account.slug}.localhost:${platform.ports.edge}`);
    const again = await Promise.all([enable(), enable()]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    const db = new pg.Client({ connectionString: (await platform.runtime()).databaseUrl });
    await db.connect();
    expect((await db.query('SELECT count(*)::int AS n FROM sign_in_services')).rows[0].n).toBe(1);
    expect((await db.query('SELECT count(*)::int AS n FROM application_databases')).rows[0].n).toBe(1);
    await db.end();

    const env = await fetch(`http://127.0.0.1:${platform.ports.gateway}/api/v1/auth/env?applicationId=${account.applicationId}`, {
      headers: { authorization: `Bearer ${account.ownerToken}` },
    });
    expect(env.status).toBe(200);
    expect(await env.text()).toMatch(/^SERVICE_AUTH_BASE_URL=.+\nSERVICE_AUTH_COOKIE_SECRET=.+\nSERVICE_AUTH_JWKS_URL=.+\/jwks\nVITE_SERVICE_AUTH_URL=.+\n$/);

    const deploy = await platform.cli(['deploy', shop, '--json'], { SLIPWAY_API_KEY: account.apiKey });
    expect(deploy.stderr).not.toMatch(/error/i);
    const task = JSON.parse(deploy.stdout);
    expect({ code: deploy.code, status: task.status, error: task.error }).toEqual({ code: 0, status: 'succeeded', error: undefined });
    expect(task.spec).toMatchObject({ kind: 'node', usesSignIn: true });
    expect(task.warnings.map((w: { code: string }) => w.code)).not.toContain('sign_in_not_enabled');

    const grace = new Visitor(platform, account.slug, '198.51.100.7');
    const signUp = await grace.call('POST', '/api/auth/sign-up/email', { email: 'grace@example.com', password: 'a long passphrase', name: 'Grace' });
    expect(signUp.status).toBe(200);
    const cookie = [signUp.headers['set-cookie']].flat().find((c) => c?.startsWith('__Host-slipway.session_token='));
    expect(cookie).toMatch(/; Path=\/; .*HttpOnly/);
    expect((await grace.call('GET', '/me')).json()).toMatchObject({ email: 'grace@example.com', name: 'Grace' });
    expect((await grace.call('POST', '/orders', { item: 'teapot' })).status).toBe(201);
    expect((await grace.call('GET', '/orders')).json()).toEqual([{ item: 'teapot', email: 'grace@example.com', name: 'Grace' }]);

    const stranger = new Visitor(platform, account.slug, '198.51.100.8');
    expect((await stranger.call('GET', '/me')).status).toBe(401);
    const wrong = await stranger.call('POST', '/api/auth/sign-in/email', { email: 'grace@example.com', password: 'not her password' });
    expect(wrong.status).toBe(401);
  });

  it("trusts a preview's address for the application's sign-in service while the preview exists: the same users sign in there", async () => {
    const previewSlug = `${account.slug}--feat`;
    const previewOrigin = `http://${previewSlug}.localhost:${platform.ports.edge}`;
    // Straight to the sign-in service, as a browser on the preview's address would call it.
    const signInFrom = (origin: string) =>
      fetch(`http://127.0.0.1:${platform.ports.auth}/a/${account.slug}/sign-in/email`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.20' },
        body: JSON.stringify({ email: 'grace@example.com', password: 'a long passphrase' }),
      });
    expect((await signInFrom(previewOrigin)).status).toBe(403);

    const deploy = await platform.cli(['deploy', shop, '--preview', 'feat', '--json'], { SLIPWAY_API_KEY: account.apiKey });
    const task = JSON.parse(deploy.stdout);
    expect({ code: deploy.code, status: task.status, url: task.url }).toEqual({ code: 0, status: 'succeeded', url: previewOrigin });
    expect((await signInFrom(previewOrigin)).status).toBe(200);

    // Through the preview's own address: the app signs Grace in (the parent's users, database and cookie secret).
    const grace = new Visitor(platform, previewSlug, '198.51.100.21');
    expect((await grace.call('POST', '/api/auth/sign-in/email', { email: 'grace@example.com', password: 'a long passphrase' })).status).toBe(200);
    expect((await grace.call('GET', '/me')).json()).toMatchObject({ email: 'grace@example.com', name: 'Grace' });
    expect((await grace.call('GET', '/orders')).json()).toEqual([{ item: 'teapot', email: 'grace@example.com', name: 'Grace' }]);

    const removed = await platform.cli(['previews', 'rm', 'feat', '--json'], { SLIPWAY_API_KEY: account.apiKey });
    expect(removed.code).toBe(0);
    // The service drops its cached origins on the change message (else within AUTH_TENANT_CACHE_SECONDS).
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await signInFrom(previewOrigin)).status) !== 403) await new Promise((ok) => setTimeout(ok, 250));
    expect(status).toBe(403);
  }, 240_000);
});
