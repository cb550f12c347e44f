import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { REDIS_ROLES, redisConnection, routesChannel } from './index.js';

// Not from @slipway/testing: it depends on this lib (libs/service-kit's specs do the same).
const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('redisConnection (real Redis)', () => {
  const opened: Redis[] = [];
  const open = (...args: Parameters<typeof redisConnection>) => {
    const redis = redisConnection(...args);
    redis.on('error', () => undefined);
    opened.push(redis);
    return redis;
  };
  // Nothing is written under it but BullMQ's meta key of a worker that never ran.
  const prefix = `slipway-test:connections:${randomBytes(5).toString('hex')}:`;
  afterAll(async () => {
    const redis = open(TEST_REDIS_URL, 'command');
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    for (const each of opened) each.disconnect();
  });

  it('gives each role its documented options, overrides winning', () => {
    expect(open(TEST_REDIS_URL, 'queue-worker', { lazyConnect: true }).options).toMatchObject({ maxRetriesPerRequest: null, lazyConnect: true });
    expect(open(TEST_REDIS_URL, 'queue-producer', { lazyConnect: true }).options).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
    });
    expect(open(TEST_REDIS_URL, 'fail-closed', { lazyConnect: true, commandTimeout: 500 }).options).toMatchObject({
      enableOfflineQueue: false,
      commandTimeout: 500,
    });
    expect(open(TEST_REDIS_URL, 'command').options).toMatchObject({ lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    expect(open(TEST_REDIS_URL, 'command', { lazyConnect: false, connectTimeout: 10_000 }).options).toMatchObject({
      lazyConnect: false,
      connectTimeout: 10_000,
    });
    // The reconnect back-off: 200 ms more per attempt, at most 2 s; a probe never reconnects.
    const backoff = REDIS_ROLES.heartbeat.retryStrategy!;
    expect([1, 5, 50].map((n) => backoff(n))).toEqual([200, 1000, 2000]);
    expect(REDIS_ROLES.probe.retryStrategy!(1)).toBeNull();
  });

  it('a BullMQ worker runs on a queue-worker connection and refuses one that gives up on commands', async () => {
    const options = { prefix: prefix.replace(/:$/, ''), autorun: false };
    const worker = new Worker('q', async () => undefined, { ...options, connection: open(TEST_REDIS_URL, 'queue-worker') });
    await worker.close();
    expect(() => new Worker('q', async () => undefined, { ...options, connection: open(TEST_REDIS_URL, 'command') })).toThrow(/maxRetriesPerRequest/);
  });

  it('a subscriber hears what a publisher sends on a channel of the catalogue', async () => {
    const channel = routesChannel(prefix);
    const subscriber = open(TEST_REDIS_URL, 'subscriber');
    const heard = new Promise<unknown>((resolve) => subscriber.on('message', (_name: string, message: string) => resolve(channel.decode(message))));
    await subscriber.subscribe(channel.name);
    await open(TEST_REDIS_URL, 'publisher').publish(channel.name, channel.encode({ applicationId: 'a1' }));
    await expect(heard).resolves.toEqual({ applicationId: 'a1' });
  });

  describe('while Redis does not answer', () => {
    // A port that accepts and never speaks: Redis hung, not gone.
    let silent: Server;
    let url: string;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
      url = `redis://127.0.0.1:${(silent.address() as { port: number }).port}`;
    });
    afterAll(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((ok) => silent.close(() => ok()));
    });

    it('a queue producer and a fail-closed counter refuse at once instead of queueing the command', async () => {
      for (const role of ['queue-producer', 'fail-closed'] as const) {
        const redis = open(url, role);
        const started = Date.now();
        await expect(redis.incr(`${prefix}n`)).rejects.toThrow(/enableOfflineQueue/);
        expect(Date.now() - started).toBeLessThan(500);
        redis.disconnect();
      }
    });

    it('a probe gives up at once where nothing listens, and does not reconnect', async () => {
      // Port 1 (tcpmux): nothing listens there on a test machine, the connection is refused at once.
      const probe = open('redis://127.0.0.1:1', 'probe');
      await expect(probe.connect()).rejects.toThrow(/Connection is closed/);
      expect(probe.status).toBe('end');
    });
  });
});
