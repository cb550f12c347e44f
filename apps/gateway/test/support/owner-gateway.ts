import type { INestApplication } from '@nestjs/common';
import { startHttpApp } from '@slipway/service-kit';
import { createTestDatabase, serviceTestEnv, testRedisPrefix } from '@slipway/testing';
import pg from 'pg';
import { AppModule } from '../../src/app.module.js';
import { loadGatewayConfig } from '../../src/config.js';
import { DASHBOARD_ORIGIN } from './dashboard-client.js';
import { send, type HttpResult } from './http.js';

export interface OwnerGateway {
  url: string;
  app: INestApplication;
  sql: pg.Pool;
  /** Where the sign-in counters live in Redis (`<QUEUE_PREFIX>:owner-sign-in:`). */
  limiterPrefix: string;
  /** Pass it as QUEUE_PREFIX to start another replica of the same platform. */
  queuePrefix: string;
  close(): Promise<void>;
}

/** The whole gateway on a real port, over its own database and Redis prefix, with the Nest app at hand. */
export async function startOwnerGateway(label: string, overrides: Record<string, string> = {}): Promise<OwnerGateway> {
  const db = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const queuePrefix = redis.prefix.replace(/:$/, '');
  const config = loadGatewayConfig(serviceTestEnv(db.url, { QUEUE_PREFIX: queuePrefix, BCRYPT_ROUNDS: '4', ...overrides }));
  const app = await startHttpApp({
    name: 'gateway',
    module: AppModule.register(config),
    port: 0,
    host: '127.0.0.1',
    logLevel: 'error',
    baseUrl: 'http://localhost:3000',
  });
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });
  // The database is dropped WITH (FORCE) at close: a connection still closing must not crash the test.
  sql.on('error', () => undefined);
  return {
    url,
    app,
    sql,
    limiterPrefix: `${config.QUEUE_PREFIX}:owner-sign-in:`,
    queuePrefix: config.QUEUE_PREFIX,
    async close() {
      await app.close();
      await sql.end();
      await redis.cleanup();
      await db.drop();
    },
  };
}

export interface From {
  /** A loopback address to connect from (127.0.0.0/8 is all this machine's): a distinct client address. */
  from?: string;
  headers?: Record<string, string>;
}

/** A dashboard JSON POST as a browser sends it (Origin + CSRF header), from a chosen local address. */
export function dashboardPost(baseUrl: string, path: string, body: unknown, options: From = {}): Promise<HttpResult> {
  const payload = Buffer.from(JSON.stringify(body));
  return send(`${baseUrl}/dashboard/api${path}`, {
    method: 'POST',
    localAddress: options.from ?? '127.0.0.1',
    headers: {
      origin: DASHBOARD_ORIGIN,
      'x-slipway-csrf': '1',
      'content-type': 'application/json',
      'content-length': String(payload.length),
      ...options.headers,
    },
    body: payload,
  });
}

export const signIn = (baseUrl: string, email: string, password: string, options: From = {}) =>
  dashboardPost(baseUrl, '/session/sign-in', { email, password }, options);
export const signUp = (baseUrl: string, email: string, password: string, options: From = {}) =>
  dashboardPost(baseUrl, '/session/sign-up', { email, password, name: 'Owner' }, options);
