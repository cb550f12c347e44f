import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A key prefix of this test's own, and a cleanup that deletes every key under it. */
export function testRedisPrefix(label = 'test'): { prefix: string; cleanup(): Promise<void> } {
  const prefix = `slipway-test:${label}:${randomBytes(5).toString('hex')}:`;
  return {
    prefix,
    cleanup: async () => {
      const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}
