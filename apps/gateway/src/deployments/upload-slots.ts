import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { ApiException } from '@slipway/service-kit';
import { redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import type { ApiPrincipal } from '../api-auth/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** A held slot; `release()` is idempotent. */
export interface UploadSlot {
  release(): Promise<void>;
}

/** How long a slot lives without renewal: a crashed replica's uploads stop counting after this. */
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = LEASE_MS / 3;
const REDIS_TIMEOUT_MS = 2000;
const RETRY_AFTER_SECONDS = 5;

/**
 * Prunes expired leases, refuses when either set is full (1: the application's, 2: the key's),
 * else adds the lease to both. Redis's clock, so replicas with skewed clocks agree.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, 2 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], lease)
end
return 0`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, 2 do
  if redis.call('ZADD', KEYS[i], 'XX', 'CH', now + lease, ARGV[1]) == 1 then redis.call('PEXPIRE', KEYS[i], lease) end
end
return 0`;

type SlotRedis = Redis & {
  acquireUploadSlot(app: string, key: string, id: string, leaseMs: number, perApp: number, perKey: number): Promise<number>;
  renewUploadSlot(app: string, key: string, id: string, leaseMs: number): Promise<number>;
};

/**
 * Bounds the uploads in progress at once per application and per API key
 * (`UPLOADS_PER_APPLICATION`, `UPLOADS_PER_API_KEY`). Counted in Redis, so every gateway
 * process and replica shares the count: each upload holds a lease (a member of one sorted set
 * per application and one per key, scored by its expiry), renewed while the upload runs and
 * removed when it ends. A lease that is never removed (a replica killed mid-upload) expires
 * after LEASE_MS. Redis not answering refuses the upload (`503 unavailable`): the bound fails
 * closed.
 */
@Injectable()
export class UploadSlots implements OnModuleDestroy {
  private readonly logger = new Logger('UploadSlots');
  private readonly redis: SlotRedis;
  private readonly prefix: string;
  private closing = false;

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.redis = redisConnection(config.REDIS_URL, 'fail-closed') as SlotRedis;
    // Redis being away is reported by the deploy queue (and answered 503 there); not twice.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('acquireUploadSlot', { numberOfKeys: 2, lua: ACQUIRE });
    this.redis.defineCommand('renewUploadSlot', { numberOfKeys: 2, lua: RENEW });
    this.prefix = `${config.QUEUE_PREFIX}:upload-slots`;
  }

  /** Takes a slot for `principal`'s upload, or throws `429 too_many_uploads` (or `503`). */
  async acquire(principal: ApiPrincipal): Promise<UploadSlot> {
    const keys = [`${this.prefix}:application:${principal.applicationId}`, `${this.prefix}:api-key:${principal.apiKeyId}`] as const;
    const id = randomUUID();
    const perApp = this.config.UPLOADS_PER_APPLICATION;
    const perKey = this.config.UPLOADS_PER_API_KEY;
    let refused: number;
    try {
      refused = await withTimeout(this.redis.acquireUploadSlot(keys[0], keys[1], id, LEASE_MS, perApp, perKey));
    } catch {
      throw new ApiException(
        'unavailable',
        'The upload counter (Redis) is not answering; nothing was accepted. Retry shortly.',
        {},
        { 'Retry-After': '5', Connection: 'close' },
      );
    }
    if (refused) {
      const message =
        refused === 1
          ? `This application already has ${perApp} uploads in progress; try again in ${RETRY_AFTER_SECONDS} seconds.`
          : `This API key already has ${perKey} uploads in progress; try again in ${RETRY_AFTER_SECONDS} seconds.`;
      // Refused before the body is read: close the connection rather than read (and throw away) the rest.
      throw new ApiException(
        'too_many_uploads',
        message,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
        { 'Retry-After': String(RETRY_AFTER_SECONDS), Connection: 'close' },
      );
    }
    const renewal = setInterval(() => {
      withTimeout(this.redis.renewUploadSlot(keys[0], keys[1], id, LEASE_MS)).catch((error: Error) =>
        this.logger.warn(`could not renew an upload slot: ${error.message}`),
      );
    }, RENEW_EVERY_MS);
    renewal.unref();
    let released: Promise<void> | undefined;
    return {
      release: () =>
        (released ??= (async () => {
          clearInterval(renewal);
          // Not removed (Redis away, or the gateway stopping): the lease expires within LEASE_MS.
          if (this.closing) return;
          await withTimeout(this.redis.multi().zrem(keys[0], id).zrem(keys[1], id).exec()).catch((error: Error) =>
            this.logger.warn(`could not release an upload slot: ${error.message}`),
          );
        })()),
    };
  }

  onModuleDestroy(): void {
    this.closing = true;
    this.redis.disconnect();
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error as Error)),
    );
  });
}
