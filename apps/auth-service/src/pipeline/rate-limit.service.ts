import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { addressBucket } from '@slipway/service-kit';
import { REDIS } from '../platform/index.js';
import { BatchedWindowLimiter } from './batched-window-limiter.js';
import { tooManyAttempts } from './sign-in-attempts.service.js';

// Sliding window log in one round trip, shared by every replica: refused attempts are not counted.
const SLIDING_WINDOW = `
local key, now, window, max = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, 0, now - window)
if redis.call('ZCARD', key) >= max then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + window - now
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 0`;

export type RateLimitBucket = 'sign-in' | 'session';

/**
 * Paths counted as sign-in attempts (the strict bucket); other paths are session reads or ordinary
 * calls. Only canonical paths get here (routing/canonical-path.ts), and the router is
 * case-sensitive; the test ignores case anyway, so no spelling of a sign-in path counts as a read.
 */
const SIGN_IN_PATHS =
  /^\/(sign-in|sign-up|change-password|reset-password|request-password-reset|send-verification-email|two-factor|magic-link|email-otp|forget-password|passkey)(\/|$)/i;

export function bucketFor(path: string): RateLimitBucket {
  return SIGN_IN_PATHS.test(path) ? 'sign-in' : 'session';
}

type SlidingWindowRedis = Redis & { slidingWindow(key: string, now: number, windowMs: number, max: number, member: string): Promise<number> };

@Injectable()
export class RateLimitService implements OnModuleDestroy {
  private readonly redis: SlidingWindowRedis;
  /** The looser session-read bucket is decided locally and shared in batches (no round trip per read or per new visitor; see its guarantee). */
  private readonly sessionReads: BatchedWindowLimiter;

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(REDIS) redis: Redis,
  ) {
    // defineCommand sends the script once and then calls it by its SHA (EVALSHA).
    if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    this.redis = redis as SlidingWindowRedis;
    this.sessionReads = new BatchedWindowLimiter(redis, { maxKeys: config.AUTH_RATE_LIMIT_SESSION_KEYS });
  }

  async onModuleDestroy(): Promise<void> {
    await this.sessionReads.close();
  }

  /** Throws 429 `{message}` with X-Retry-After and Retry-After when the address (IPv4, or IPv6 /64) used its allowance. */
  async consume(bucket: RateLimitBucket, applicationId: string, address: string): Promise<void> {
    const [max, windowSeconds] =
      bucket === 'sign-in'
        ? [this.config.AUTH_RATE_LIMIT_SIGN_IN_MAX, this.config.AUTH_RATE_LIMIT_SIGN_IN_WINDOW_SECONDS]
        : [this.config.AUTH_RATE_LIMIT_SESSION_MAX, this.config.AUTH_RATE_LIMIT_SESSION_WINDOW_SECONDS];
    // An IPv6 client is its /64: it can rotate through the rest of it freely.
    const key = `${this.config.AUTH_REDIS_PREFIX}rl:${bucket}:${applicationId}:${addressBucket(address)}`;
    const waitMs =
      bucket === 'session'
        ? await this.sessionReads.consume(key, max, windowSeconds * 1000)
        : Number(await this.redis.slidingWindow(key, Date.now(), windowSeconds * 1000, max, `${Date.now()}:${randomBytes(6).toString('hex')}`));
    if (waitMs > 0) throw tooManyAttempts(waitMs);
  }
}
