import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serverUnavailable } from './server-unavailable.js';

/** A loopback port nothing listens on (a server that is restarting). */
async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('serverUnavailable: what the clients really throw while a server is away', () => {
  it('node-postgres: connection refused', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: await deadPort(), user: 'postgres' });
    const error = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(serverUnavailable(error)).toBe(true);
  });

  it('ioredis: a command given up on while Redis is down (the platform services use maxRetriesPerRequest 1)', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: await deadPort(), maxRetriesPerRequest: 1, retryStrategy: () => 50, lazyConnect: false });
    redis.on('error', () => undefined);
    try {
      const error = await redis.get('x').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeDefined();
      expect(serverUnavailable(error)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it('ioredis: a command on a connection closed for good', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, enableOfflineQueue: false });
    redis.on('error', () => undefined);
    await redis.connect();
    await redis.quit();
    const error = await redis.get('x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(serverUnavailable(error)).toBe(true);
  });

  it('not for errors of the request itself', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres' });
    await client.connect();
    try {
      const error = await client.query('SELEC 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(serverUnavailable(error)).toBe(false);
    } finally {
      await client.end();
    }
    expect(serverUnavailable(new Error('database password is hunter2'))).toBe(false);
    expect(serverUnavailable(undefined)).toBe(false);
  });
});
