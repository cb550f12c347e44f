import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { OwnerSignInLimits } from '@slipway/contract';
import { ApiException, AttemptLimiter, accountKeys, addressBucket, hashedAccount, type AttemptKeys } from '@slipway/service-kit';
import { redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, ownerSignInLimits, type GatewayConfig } from '../../config.js';

const COMMAND_TIMEOUT_MS = 1000;

export interface SignInAttempt {
  readonly keys: AttemptKeys;
}

/**
 * Owners' sign-in limits, counted in Redis (shared by every gateway process and replica) under
 * `<QUEUE_PREFIX>:owner-sign-in:` by the attempt script both sign-in surfaces share
 * (`AttemptLimiter` of @slipway/service-kit). Fails closed: when Redis does not answer, sign-in is
 * refused with 503 rather than left unlimited. Out of failures but not locked yet, a refusal waits
 * out the failure window.
 */
@Injectable()
export class SignInLimiter implements OnModuleDestroy {
  private readonly logger = new Logger('SignInLimiter');
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly limits: OwnerSignInLimits;
  private readonly attempts: AttemptLimiter;
  private lastError = '';

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.limits = ownerSignInLimits(config);
    this.prefix = `${config.QUEUE_PREFIX}:owner-sign-in:`;
    // A command that hangs (Redis stalled, not down) refuses the sign-in too.
    this.redis = redisConnection(config.REDIS_URL, 'fail-closed', { commandTimeout: COMMAND_TIMEOUT_MS });
    this.redis.on('error', (error: Error) => this.noteError(error));
    this.redis.on('ready', () => (this.lastError = ''));
    this.attempts = new AttemptLimiter(this.redis, { limits: this.limits, waitBeforeLock: 'failure-window' });
  }

  /** Reserves an attempt for `email` (already normalised) from `address`, or throws 429 / 503. */
  async begin(email: string, address: string): Promise<SignInAttempt> {
    const keys = { ...accountKeys(`${this.prefix}account:${hashedAccount(email)}`), address: `${this.prefix}address:${addressBucket(address)}` };
    const verdict = await this.call(() => this.attempts.reserve(keys));
    if (verdict.refused) throw tooMany(verdict.refused, verdict.waitMs);
    return { keys };
  }

  /** The password did not match; locks the account once its failures are used up. */
  async failed(attempt: SignInAttempt): Promise<void> {
    const lockedMs = await this.call(() => this.attempts.failed(attempt.keys));
    if (lockedMs > 0)
      this.logger.warn(`An owner account was locked for ${Math.ceil(lockedMs / 1000)} s after ${this.limits.accountMaxFailures} failed sign-ins.`);
  }

  /** Best effort: a counter left standing only makes the next lock come sooner. */
  async succeeded(attempt: SignInAttempt): Promise<void> {
    await this.call(() => this.attempts.succeeded(attempt.keys)).catch(() => undefined);
  }

  async cancelled(attempt: SignInAttempt): Promise<void> {
    await this.call(() => this.attempts.cancelled(attempt.keys)).catch(() => undefined);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  private async call<T>(step: () => Promise<T>): Promise<T> {
    if (!(await this.ready())) throw unavailable();
    try {
      return await step();
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
