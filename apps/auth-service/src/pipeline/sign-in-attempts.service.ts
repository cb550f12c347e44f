import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AttemptLimiter, accountKeys, addressBucket, hashedAccount, type AccountKeys, type AttemptKeys } from '@slipway/service-kit';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError } from '../common/index.js';
import { REDIS } from '../platform/index.js';

/** What is being guessed: each has its own counters (docs/decisions/end-user-sign-in-limits.md). */
export type AttemptPurpose = 'sign-in' | 'two-factor' | 'email-code';

export interface SignInAttempt {
  readonly keys: AttemptKeys;
}

/**
 * End users' failed sign-ins, counted per (application, account) and per (application, client
 * address — IPv4, or IPv6 /64) in Redis, so every process and replica of the service shares them.
 * The account is the email as sent, trimmed and lower-cased, hashed (no addresses in Redis); an
 * unknown email is counted and locked exactly like a known one, so a lock reveals nothing. A
 * password reset (the user proved they read the email) lifts the account's lock and history, so
 * a stranger can delay a user but never lock them out (docs/decisions/end-user-sign-in-limits.md). If Redis fails,
 * the attempt fails (500): never an unlimited door. The counting is the attempt script both
 * sign-in surfaces share (`AttemptLimiter` of @slipway/service-kit, the owners' door's approach); out of
 * failures but not locked yet, a refusal waits for the lock about to be set (not the failure
 * window's end, up to 15 minutes away).
 */
@Injectable()
export class SignInAttempts {
  private readonly logger = new Logger('SignInAttempts');
  private readonly limiter: AttemptLimiter;

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(REDIS) redis: Redis,
  ) {
    this.limiter = new AttemptLimiter(redis, {
      limits: {
        accountMaxFailures: config.AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES,
        accountWindowSeconds: config.AUTH_SIGN_IN_ACCOUNT_WINDOW_SECONDS,
        accountLockSeconds: config.AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS,
        accountMaxLockSeconds: config.AUTH_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS,
        addressMaxFailures: config.AUTH_SIGN_IN_ADDRESS_MAX_FAILURES,
        addressWindowSeconds: config.AUTH_SIGN_IN_ADDRESS_WINDOW_SECONDS,
      },
      waitBeforeLock: 'coming-lock',
    });
  }

  /**
   * Reserves an attempt at `account` (an email as sent, or a user id) of the application from
   * `address`, or throws 429 (X-Retry-After). `purpose` keeps separate counters for each kind of
   * secret guessed — the password (`sign-in`), a second factor, an emailed code — with the same
   * limits and locks: a code is limited per account as well as per address.
   */
  async begin(applicationId: string, account: string, address: string, purpose: AttemptPurpose = 'sign-in'): Promise<SignInAttempt> {
    const keys = {
      ...this.accountKeys(applicationId, account, purpose),
      address: `${this.config.AUTH_REDIS_PREFIX}${purpose}:${applicationId}:address:${addressBucket(address)}:failures`,
    };
    const verdict = await this.limiter.reserve(keys);
    if (verdict.refused) throw tooManyAttempts(verdict.waitMs);
    return { keys };
  }

  /** The password did not match (or the account does not exist): locks the account once its failures are used up. */
  async failed(attempt: SignInAttempt): Promise<void> {
    const lockMs = await this.limiter.failed(attempt.keys);
    if (lockMs > 0)
      this.logger.warn(`An account was locked for ${Math.ceil(lockMs / 1000)} s after ${this.config.AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES} failed sign-ins.`);
  }

  /** Best effort: a counter left standing only makes the next lock come sooner. */
  async succeeded(attempt: SignInAttempt): Promise<void> {
    await this.limiter.succeeded(attempt.keys).catch(() => undefined);
  }

  async cancelled(attempt: SignInAttempt): Promise<void> {
    await this.limiter.cancelled(attempt.keys).catch(() => undefined);
  }

  /** The user proved control of the account another way (password reset or change): its lock, failures and lock history go. */
  async clearAccount(applicationId: string, account: string, purpose: AttemptPurpose = 'sign-in'): Promise<void> {
    await this.limiter.clearAccount(this.accountKeys(applicationId, account, purpose));
  }

  private accountKeys(applicationId: string, account: string, purpose: AttemptPurpose): AccountKeys {
    return accountKeys(`${this.config.AUTH_REDIS_PREFIX}${purpose}:${applicationId}:account:${hashedAccount(account.trim().toLowerCase())}`);
  }
}

/** Answered as the address limit is: Better Auth's 429 `{message}` with X-Retry-After (and Retry-After). */
export function tooManyAttempts(waitMs: number): AuthError {
  const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return new AuthError(
    429,
    'TOO_MANY_REQUESTS',
    'Too many requests. Please try again later.',
    { 'X-Retry-After': seconds, 'Retry-After': seconds },
    { message: 'Too many requests. Please try again later.' },
  );
}
