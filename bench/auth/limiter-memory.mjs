// The session-read limiter's memory after N distinct visitors (default 1 000 000), each seen once:
// the real class from apps/auth-service/dist over the real Redis, with the service's defaults
// (300 reads / 10 s per visitor, AUTH_RATE_LIMIT_SESSION_KEYS keys held). Prints one JSON line.
// Usage: node --expose-gc bench/auth/limiter-memory.mjs [visitors] [maxKeys]
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { BatchedWindowLimiter } from '../../apps/auth-service/dist/pipeline/batched-window-limiter.js';

const { Redis } = createRequire(new URL('../../apps/auth-service/package.json', import.meta.url))('ioredis');
const visitors = Number(process.argv[2] ?? 1_000_000);
const maxKeys = Number(process.argv[3] ?? 100_000);
const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
let roundTrips = 0;
const pipeline = redis.pipeline.bind(redis);
redis.pipeline = (...args) => (roundTrips++, pipeline(...args));
const gc = () => (globalThis.gc ? globalThis.gc() : undefined);
gc();
const before = process.memoryUsage().heapUsed;
const limiter = new BatchedWindowLimiter(redis, { maxKeys });
// Keys shaped as the service builds them: prefix, bucket, application id, address.
const prefix = `slipway-bench:${randomBytes(4).toString('hex')}:rl:session:${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}:`;
const started = performance.now();
let refused = 0;
for (let i = 0; i < visitors; i++) {
  const address = `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
  if ((await limiter.consume(`${prefix}${address}:${i >>> 24}`, 300, 10_000)) !== 0) refused++;
}
const nsPerDecision = ((performance.now() - started) * 1e6) / visitors;
gc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(
  `${JSON.stringify({ visitors, maxKeys, keysHeld: limiter.size, heapMB: +((after - before) / 2 ** 20).toFixed(1), nsPerDecision: Math.round(nsPerDecision), redisRoundTrips: roundTrips, refused })}\n`,
);
await limiter.close();
redis.disconnect();
