import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { dropApplicationDatabase, provisionSignInTenant } from '@slipway/sign-in-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData } from '@slipway/platform-data';
import { startHttpApp } from '@slipway/service-kit';
import { TEST_SERVER_URL, createTestDatabase, freePort, serviceTestEnv, testRedisPrefix, type TestDatabase } from '@slipway/testing';
import { AppModule } from '../src/app.module.js';
import { loadAuthConfig, type AuthConfig } from '../src/config.js';

/** The trusted origin tests send: the app's own address under the default publishing domain. */
export const originOf = (slug: string) => `http://${slug}.localhost:8080`;

export interface AuthHarness {
  url: string;
  config: AuthConfig;
  prisma: PrismaClient;
  app: INestApplication;
  authUrl(slug: string): string;
  /** A provisioned application with sign-in switched on. */
  createTenant(slug: string, options?: { allowLocalhost?: boolean; settings?: object }): Promise<{ applicationId: string; slug: string; authUrl: string }>;
  close(): Promise<void>;
}

/**
 * Specs about something else (address limits, sessions, the Better Auth client) sign in wrongly
 * with one email many times: the per-account and per-address failure limits are off unless a spec
 * turns them on (test/sign-in-abuse.e2e.spec.ts does, with the defaults' shape).
 */
const FAILURE_LIMITS_OFF = { AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES: '100000', AUTH_SIGN_IN_ADDRESS_MAX_FAILURES: '100000' };

/** A real auth-service on a free port over its own platform database and Redis prefix. */
export async function startAuthHarness(label: string, env: Record<string, string> = {}): Promise<AuthHarness> {
  const db: TestDatabase = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadAuthConfig(
    serviceTestEnv(db.url, {
      AUTH_PUBLIC_URL: url,
      AUTH_REDIS_PREFIX: redis.prefix,
      AUTH_RATE_LIMIT_SIGN_IN_MAX: '1000',
      ...FAILURE_LIMITS_OFF,
      AUTH_TENANT_CACHE_SECONDS: '0',
      ...env,
    }),
  );
  const app = await startHttpApp({
    name: 'auth-service',
    module: AppModule.register(config),
    port,
    host: '127.0.0.1',
    logLevel: 'warn',
    baseUrl: config.PUBLIC_URL,
  });
  const platform = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 2 });
  const prisma = platform.infrastructure.prisma;
  const keyring = keyringFromMasterKey(config.SLIPWAY_MASTER_KEY);
  const owner = await prisma.owner.create({ data: { email: `owner-${randomBytes(4).toString('hex')}@example.com` } });
  const appIds: string[] = [];
  return {
    url,
    config,
    prisma,
    app,
    authUrl: (slug) => `${url}/a/${slug}`,
    async createTenant(slug, options = {}) {
      const application = await prisma.application.create({ data: { ownerId: owner.id, name: slug, slug, allowLocalhost: options.allowLocalhost ?? true } });
      appIds.push(application.id);
      await provisionSignInTenant({
        platform,
        keyring,
        adminDatabaseUrl: config.APP_DATABASES_ADMIN_URL,
        appsDomains: config.APPS_DOMAIN,
        appsScheme: config.APPS_SCHEME,
        applicationId: asApplicationId(application.id),
      });
      if (options.settings) await prisma.signInService.update({ where: { applicationId: application.id }, data: { settings: options.settings } });
      return { applicationId: application.id, slug, authUrl: `${url}/a/${slug}` };
    },
    async close() {
      await app.close();
      await platform.close();
      for (const id of appIds) await dropApplicationDatabase(TEST_SERVER_URL, id);
      await redis.cleanup();
      await db.drop();
    },
  };
}

/**
 * Node has no cookie jar: a fetch for Better Auth's client (`fetchOptions.customFetchImpl`) that
 * keeps cookies and sends the page's Origin, as a browser on the application would. `jwts`
 * collects `set-auth-jwt` headers; `setCookies` holds the last answer's Set-Cookie lines;
 * `redirect: 'manual'` leaves 302s to the test (links and OAuth callbacks).
 */
export function browserLikeFetch(origin: string, options: { redirect?: 'follow' | 'manual' } = {}) {
  const jar = new Map<string, string>();
  const jwts: string[] = [];
  const state = { setCookies: [] as string[] };
  const impl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set('origin', origin);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new Request(request, { headers, ...(options.redirect ? { redirect: options.redirect } : {}) }));
    state.setCookies = res.headers.getSetCookie();
    for (const line of state.setCookies) {
      const pair = line.split(';')[0]!;
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (!value || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const jwt = res.headers.get('set-auth-jwt');
    if (jwt) jwts.push(jwt);
    return res;
  };
  return { impl, jar, jwts, state };
}

/** A tiny browser stand-in: keeps cookies per client and sends a trusted Origin. */
export class TestClient {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly authUrl: string,
    public origin: string | null,
    public forwardedFor?: string,
  ) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const h: Record<string, string> = { ...headers };
    if (this.origin) h['origin'] = this.origin;
    if (this.forwardedFor) h['x-forwarded-for'] = this.forwardedFor;
    if (this.cookies.size) h['cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(`${this.authUrl}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    this.store(res);
    return res;
  }

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  post(path: string, body: unknown = {}, headers?: Record<string, string>) {
    return this.request('POST', path, body, headers);
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, undefined, headers);
  }

  async signUp(email: string, password = 'correct horse battery', name = 'Test User') {
    return this.post('/sign-up/email', { email, password, name });
  }

  async signIn(email: string, password = 'correct horse battery') {
    return this.post('/sign-in/email', { email, password });
  }
}
