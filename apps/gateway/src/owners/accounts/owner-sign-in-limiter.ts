import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { OwnerSignInLimits } from '@slipway/contract';
import { ApiException, addressBucket } from '@slipway/server';
import { redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, ownerSignInLimits, type GatewayConfig } from '../../config.js';

const COMMAND_TIMEOUT_MS = 1000;
const STRIKES_TTL_MS = 24 * 3600 * 1000;

/**
 * Reserves an attempt before any password is hashed, so parallel requests cannot all slip in
 * before the first failure is counted. Refuses (1 = account, 2 = address) with the ms to wait.
 * KEYS: account failures, account lock, address failures. ARGV: account max, account window ms,
 * address max, address window ms.
 */
const BEGIN = `
local lock = redis.call('PTTL', KEYS[2])
if lock > 0 then return {1, lock} end
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then
  local t = redis.call('PTTL', KEYS[1]); if t <= 0 then t = 1000 end; return {1, t}
end
if tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[3]) then
  local t = redis.call('PTTL', KEYS[3]); if t <= 0 then t = 1000 end; return {2, t}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('INCR', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
return {0, 0}`;

/**
 * A reserved attempt failed: once the account has used up its failures, it is locked; each lock
 * within 24 h of the previous one doubles (ARGV: max, first lock ms, longest lock ms, strikes ttl).
 * KEYS: account failures, account lock, account strikes.
 */
const FAILED = `
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) and redis.call('EXISTS', KEYS[2]) == 0 then
  local strikes = redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  local ms = math.floor(math.min(tonumber(ARGV[2]) * 2 ^ (strikes - 1), tonumber(ARGV[3])))
  redis.call('SET', KEYS[2], '1', 'PX', ms)
  redis.call('DEL', KEYS[1])
  return ms
end
return 0`;

/** Signed in: the account starts afresh; the address keeps only its failures. KEYS: account failures, strikes, address failures. */
const SUCCEEDED = `
redis.call('DEL', KEYS[1], KEYS[2])
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 0`;

/** The attempt never checked a password (server busy): give the reservation back. KEYS: account failures, address failures. */
const CANCELLED = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0`;

export interface SignInAttempt {
  readonly keys: { failures: string; lock: string; strikes: string; address: string };
}

/**
 * Owners' sign-in limits, counted in Redis (shared by every gateway process and replica) under
 * `<QUEUE_PREFIX>:owner-sign-in:`. Fails closed: when Redis does not answer, sign-in is refused
 * with 503 rather than left unlimited.
 */
@Injectable()
export class SignInLimiter implements OnModuleDestroy {
  private readonly logger = new Logger('SignInLimiter');
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly limits: OwnerSignInLimits;
  private lastError = '';

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.limits = ownerSignInLimits(config);
    this.prefix = `${config.QUEUE_PREFIX}:owner-sign-in:`;
    // A command that hangs (Redis stalled, not down) refuses the sign-in too.
    this.redis = redisConnection(config.REDIS_URL, 'fail-closed', { commandTimeout: COMMAND_TIMEOUT_MS });
    this.redis.on('error', (error: Error) => this.noteError(error));
    this.redis.on('ready', () => (this.lastError = ''));
  }

  /** Reserves an attempt for `email` (already normalised) from `address`, or throws 429 / 503. */
  async begin(email: string, address: string): Promise<SignInAttempt> {
    const account = `${this.prefix}account:${createHash('sha256').update(email).digest('hex')}`;
    const keys = {
      failures: `${account}:failures`,
      lock: `${account}:lock`,
      strikes: `${account}:strikes`,
      address: `${this.prefix}address:${addressBucket(address)}`,
    };
    const l = this.limits;
    const [refused, waitMs] = (await this.call(
      BEGIN,
      [keys.failures, keys.lock, keys.address],
      [l.accountMaxFailures, l.accountWindowSeconds * 1000, l.addressMaxFailures, l.addressWindowSeconds * 1000],
    )) as [number, number];
    if (refused) throw tooMany(refused === 1 ? 'account' : 'address', waitMs);
    return { keys };
  }

  /** The password did not match; locks the account once its failures are used up. */
  async failed(attempt: SignInAttempt): Promise<void> {
    const { failures, lock, strikes } = attempt.keys;
    const l = this.limits;
    const lockedMs = Number(
      await this.call(FAILED, [failures, lock, strikes], [l.accountMaxFailures, l.accountLockSeconds * 1000, l.accountMaxLockSeconds * 1000, STRIKES_TTL_MS]),
    );
    if (lockedMs > 0) this.logger.warn(`An owner account was locked for ${Math.ceil(lockedMs / 1000)} s after ${l.accountMaxFailures} failed sign-ins.`);
  }

  /** Best effort: a counter left standing only makes the next lock come sooner. */
  async succeeded(attempt: SignInAttempt): Promise<void> {
    await this.call(SUCCEEDED, [attempt.keys.failures, attempt.keys.strikes, attempt.keys.address], []).catch(() => undefined);
  }

  async cancelled(attempt: SignInAttempt): Promise<void> {
    await this.call(CANCELLED, [attempt.keys.failures, attempt.keys.address], []).catch(() => undefined);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  private async call(script: string, keys: string[], args: number[]): Promise<unknown> {
    if (!(await this.ready())) throw unavailable();
    try {
      return await this.redis.eval(script, keys.length, ...keys, ...args);
    } catch (error) {
      this.noteError(error as Error);
      throw unavailable();
    }
  }

  /** Ready now, or (still connecting, e.g. just after start) within a second. */
  private ready(): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    if (!['connecting', 'connect', 'reconnecting', 'wait'].includes(this.redis.status)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => (clearTimeout(timer), this.redis.off('ready', onReady), resolve(ok));
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), COMMAND_TIMEOUT_MS);
      this.redis.once('ready', onReady);
    });
  }

  private noteError(error: Error): void {
    if (error.message === this.lastError) return;
    this.lastError = error.message;
    this.logger.warn(`Redis: ${error.message}`);
  }
}

function tooMany(scope: 'account' | 'address', waitMs: number): ApiException {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  const what = scope === 'account' ? 'for this account' : 'from this address';
  return new ApiException(
    'too_many_sign_in_attempts',
    `Too many failed sign-in attempts ${what}; try again in ${retryAfterSeconds} seconds.`,
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

function unavailable(): ApiException {
  return new ApiException('unavailable', 'Sign-in is paused: the attempt counter (Redis) is not answering. Retry shortly.', {}, { 'Retry-After': '5' });
}
