import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { startHttpApp } from '@slipway/service-kit';
import { TEST_REDIS_URL } from './redis.js';

/** A base environment for a service under test: real Postgres database, real Redis, any free port. */
export function serviceTestEnv(databaseUrl: string, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

export interface ServiceUnderTest {
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

/** Starts a Nest module in-process on a real HTTP port, exactly as its main.ts would. */
export async function startServiceForTest(name: string, module: unknown, options: { baseUrl?: string } = {}): Promise<ServiceUnderTest> {
  const app = await startHttpApp({ name, module, port: 0, host: '127.0.0.1', logLevel: 'warn', baseUrl: options.baseUrl ?? 'http://localhost:3000' });
  const address = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}
