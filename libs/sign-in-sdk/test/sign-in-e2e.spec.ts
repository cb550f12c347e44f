import { dropApplicationDatabase, signInRuntimeEnv } from '@slipway/sign-in-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData, type PlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL } from '@slipway/testing';
import { deployShop, type DeployedApp } from './support/deployed-app.js';
import { startPlatform, type Platform } from './support/platform.js';

/** A browser stand-in on the app's page: its cookies, the app's Origin, and its own address (set by the edge). */
class Visitor {
  readonly cookies = new Map<string, string>();
  constructor(
    private readonly app: DeployedApp,
    private readonly address: string,
  ) {}

  async fetch(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const h: Record<string, string> = { origin: this.app.origin, 'x-forwarded-for': this.address, ...headers };
    if (body !== undefined) h['content-type'] = 'application/json';
    if (this.cookies.size) h['cookie'] = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    const res = await fetch(`${this.app.url}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (value) this.cookies.set(pair!.slice(0, eq), value);
      else this.cookies.delete(pair!.slice(0, eq));
    }
    return res;
  }
}

describe('switching sign-in on, end to end: platform calls → a Node app using @slipway/sign-in-sdk', () => {
  let platform: Platform;
  let data: PlatformData | undefined;
  let prisma: PrismaClient;
  let app: DeployedApp | undefined;
  let applicationId: string;
  let pat: string;
  const dashboardCookie: string[] = [];

  const dashboard = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${platform.gatewayUrl}/dashboard/api${path}`, {
      method,
      headers: { origin: 'http://localhost:3000', 'x-slipway-csrf': '1', 'content-type': 'application/json', cookie: dashboardCookie.join('; ') },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('slipway_session='));
    if (cookie) dashboardCookie.splice(0, 1, cookie.split(';')[0]!);
    return { status: res.status, json: (await res.json()) as any };
  };
  const platformCall = (method: string, path: string) => fetch(`${platform.gatewayUrl}${path}`, { method, headers: { authorization: `Bearer ${pat}` } });

  beforeAll(async () => {
    platform = await startPlatform('sign-in-sdk-e2e');
    data = openPlatformData({ DATABASE_URL: platform.db.url }, { poolSize: 2 });
    prisma = data.infrastructure.prisma;
    // Bootstrap: an owner, an application and an owner token, through the dashboard API.
    await dashboard('POST', '/session/sign-up', { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' });
    applicationId = (await dashboard('POST', '/applications', { name: 'Shop' })).json.id;
    pat = (await dashboard('POST', '/tokens', { name: 'e2e' })).json.token;
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await data?.close();
    if (applicationId) await dropApplicationDatabase(TEST_SERVER_URL, applicationId);
    await platform?.close();
  });

  it('switch on (twice, and twice concurrently: one record), fetch the env, run the app, sign up and in through it, join its table with service_auth.users', async () => {
    const enable = () => platformCall('POST', `/api/v1/auth?applicationId=${applicationId}`);
    const first = await enable();
    expect(first.status).toBe(201);
    const record = (await first.json()) as any;
    expect((await (await enable()).json()) as unknown).toEqual(record);
    const concurrent = await Promise.all([enable(), enable()]);
    expect(concurrent.map((r) => r.status)).toEqual([200, 200]);
    expect(await prisma.signInService.count({ where: { applicationId } })).toBe(1);
    expect(await prisma.applicationDatabase.count({ where: { applicationId } })).toBe(1);

    const envText = await (await platformCall('GET', `/api/v1/auth/env?applicationId=${applicationId}`)).text();
    const fromEnvText = Object.fromEntries(
      envText
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(fromEnvText['SERVICE_AUTH_BASE_URL']).toBe(record.baseUrl);

    // What a deploy of this application receives at run time.
    const runtime = await signInRuntimeEnv(data!.signInServices, keyringFromMasterKey(platform.masterKey), asApplicationId(applicationId), {
      authPublicUrl: platform.authUrl,
      appDatabasesUrl: TEST_SERVER_URL,
    });
    expect(runtime.runtime).toMatchObject(fromEnvText);
    app = await deployShop(runtime.runtime);

    const ada = new Visitor(app, '198.51.100.7');
    const signUp = await ada.fetch('POST', '/api/auth/sign-up/email', { email: 'grace@example.com', password: 'a long passphrase', name: 'Grace' });
    expect(signUp.status).toBe(200);
    const cookie = signUp.headers.getSetCookie().find((c) => c.startsWith('__Host-slipway.session_token='))!;
    // Re-issued first-party on the app's host: whole site, no Domain, same flags.
    expect(cookie).toMatch(/; Path=\/; /);
    expect(cookie).not.toMatch(/Domain=|\/a\//);
    expect(cookie).toMatch(/HttpOnly/);

    ada.cookies.clear();
    expect((await ada.fetch('GET', '/me')).status).toBe(401);
    const signIn = await ada.fetch('POST', '/api/auth/sign-in/email', { email: 'grace@example.com', password: 'a long passphrase' });
    expect(signIn.status).toBe(200);
    const viaService = (await (await ada.fetch('GET', '/api/auth/get-session')).json()) as any;
    expect(viaService.user).toMatchObject({ email: 'grace@example.com', name: 'Grace' });
    // getSession reads it itself: cookie signature + service_auth over DATABASE_URL.
    const me = (await (await ada.fetch('GET', '/me')).json()) as any;
    expect(me).toMatchObject({ id: viaService.user.id, email: 'grace@example.com', name: 'Grace', emailVerified: false });

    expect((await ada.fetch('POST', '/orders', { item: 'teapot' })).status).toBe(201);
    expect(await (await ada.fetch('GET', '/orders')).json()).toEqual([{ item: 'teapot', email: 'grace@example.com', name: 'Grace' }]);

    const jwt = ((await (await ada.fetch('GET', '/api/auth/token')).json()) as any).token;
    expect(await (await ada.fetch('GET', '/verify', undefined, { authorization: `Bearer ${jwt}` })).json()).toEqual({ sub: me.id, email: 'grace@example.com' });
    const tampered = `${jwt.slice(0, -4)}AAAA`;
    expect((await ada.fetch('GET', '/verify', undefined, { authorization: `Bearer ${tampered}` })).status).toBe(401);

    // A forged session cookie is not a session.
    const forged = new Visitor(app, '198.51.100.8');
    forged.cookies.set('__Host-slipway.session_token', encodeURIComponent(`${'x'.repeat(32)}.${Buffer.alloc(32).toString('base64')}`));
    expect((await forged.fetch('GET', '/me')).status).toBe(401);
  });

  it('two visitors behind the one app server get separate rate-limit allowances; an unsigned or forged address is ignored', async () => {
    // A different account each time: the per-account lock (5 failures) is not what this measures.
    let tries = 0;
    const attempt = (v: Visitor) => v.fetch('POST', '/api/auth/sign-in/email', { email: `nobody-${tries++}@example.com`, password: 'wrong password!' });
    const first = new Visitor(app!, '203.0.113.10');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await attempt(first)).status);
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    const limited = await attempt(first);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-retry-after')).toMatch(/^\d+$/);
    // Same app server, another visitor: its own allowance.
    expect((await attempt(new Visitor(app!, '203.0.113.20'))).status).toBe(401);

    // Straight to the service with made-up addresses: the header's signature is wrong, so every
    // request counts against the caller's real address and the tenth is refused.
    const baseUrl = ((await (await platformCall('GET', '/api/v1/auth')).json()) as any).services[0].baseUrl as string;
    const direct: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${baseUrl}/sign-in/email`, {
        method: 'POST',
        headers: {
          origin: app!.origin,
          'content-type': 'application/json',
          'x-slipway-client-address': `192.0.2.${i};${Math.floor(Date.now() / 1000)};forged`,
        },
        body: JSON.stringify({ email: `direct-${i}@example.com`, password: 'wrong password!' }),
      });
      direct.push(res.status);
    }
    expect(direct.at(-1)).toBe(429);
  });
});
