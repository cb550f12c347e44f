import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { addressBucket } from '@slipway/server';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { AuthError } from '../common/index.js';
import { REDIS } from '../platform/index.js';

/** How long a lock is remembered for doubling the next one. */
const STRIKES_TTL_MS = 24 * 3600 * 1000;

/**
 * Reserves an attempt before any password is hashed, so parallel requests cannot all slip in
 * before the first failure is counted (the reservation is the failure unless the password
 * matches). Refuses with the ms to wait: 1 = account locked or out of failures, 2 = address.
 * Out of failures but not locked yet means the last verdicts are still being reached: the wait is
 * the lock they are about to set (not the failure window's end, up to 15 minutes away).
 * KEYS: account failures, account lock, address failures, account strikes. ARGV: account max,
 * account window ms, address max, address window ms, first lock ms, longest lock ms.
 * The approach of the owners' door (apps/gateway SignInLimiter).
 */
const BEGIN = `
local lock = redis.call('PTTL', KEYS[2])
if lock > 0 then return {1, lock} end
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then
  local strikes = tonumber(redis.call('GET', KEYS[4]) or '0')
  return {1, math.floor(math.min(tonumber(ARGV[5]) * 2 ^ strikes, tonumber(ARGV[6])))}
end
if tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[3]) then
  local t = redis.call('PTTL', KEYS[3]); if t <= 0 then t = 1000 end; return {2, t}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('INCR', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
return {0, 0}`;

/**
 * A reserved attempt failed: once the account has used up its failures it is locked; each lock
 * within 24 h of the previous one doubles, up to the longest (ARGV: max, first lock ms, longest
 * lock ms, strikes ttl ms). KEYS: account failures, account lock, account strikes. Returns the lock's ms or 0.
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

/** Signed in: the account starts afresh; the address gets back only this attempt. KEYS: account failures, strikes, address failures. */
const SUCCEEDED = `
redis.call('DEL', KEYS[1], KEYS[2])
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 0`;

/** The attempt never reached a verdict (database away): the reservation is given back. KEYS: account failures, address failures. */
const CANCELLED = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0`;

/** What is being guessed: each has its own counters (docs/decisions/end-user-sign-in-limits.md). */
export type AttemptPurpose = 'sign-in' | 'two-factor' | 'email-code';

export interface SignInAttempt {
  readonly keys: { failures: string; lock: string; strikes: string; address: string };
}

/**
 * End users' failed sign-ins, counted per (application, account) and per (application, client
 * address — IPv4, or IPv6 /64) in Redis, so every process and replica of the service shares them.
 * The account is the email as sent, trimmed and lower-cased, hashed (no addresses in Redis); an
 * unknown email is counted and locked exactly like a known one, so a lock reveals nothing. A
 * password reset (the user proved they read the email) lifts the account's lock and history, so
 * a stranger can delay a user but never lock them out (docs/decisions/end-user-sign-in-limits.md). If Redis fails,
 * the attempt fails (500): never an unlimited door.
 */
@Injectable()
export class SignInAttempts {
  private readonly logger = new Logger('SignInAttempts');

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /**
   * Reserves an attempt at `account` (an email as sent, or a user id) of the application from
   * `address`, or throws 429 (X-Retry-After). `purpose` keeps separate counters for each kind of
   * secret guessed — the password (`sign-in`), a second factor, an emailed code — with the same
   * limits and locks: a code is limited per account as well as per address.
   */
  async begin(applicationId: string, account: string, address: string, purpose: AttemptPurpose = 'sign-in'): Promise<SignInAttempt> {
    const accountKey = this.accountKey(applicationId, account, purpose);
    const keys = {
      failures: `${accountKey}:failures`,
      lock: `${accountKey}:lock`,
      strikes: `${accountKey}:strikes`,
      address: `${this.config.AUTH_REDIS_PREFIX}${purpose}:${applicationId}:address:${addressBucket(address)}:failures`,
    };
    const c = this.config;
    const [refused, waitMs] = (await this.redis.eval(
      BEGIN,
      4,
      keys.failures,
      keys.lock,
      keys.address,
      keys.strikes,
      c.AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES,
      c.AUTH_SIGN_IN_ACCOUNT_WINDOW_SECONDS * 1000,
      c.AUTH_SIGN_IN_ADDRESS_MAX_FAILURES,
      c.AUTH_SIGN_IN_ADDRESS_WINDOW_SECONDS * 1000,
      c.AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS * 1000,
      this.longestLockMs(),
    )) as [number, number];
    if (refused) throw tooManyAttempts(waitMs);
    return { keys };
  }

  /** The password did not match (or the account does not exist): locks the account once its failures are used up. */
  async failed(attempt: SignInAttempt): Promise<void> {
    const { failures, lock, strikes } = attempt.keys;
    const c = this.config;
    const lockMs = Number(
      await this.redis.eval(
        FAILED,
        3,
        failures,
        lock,
        strikes,
        c.AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES,
        c.AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS * 1000,
        this.longestLockMs(),
        STRIKES_TTL_MS,
      ),
    );
    if (lockMs > 0) this.logger.warn(`An account was locked for ${Math.ceil(lockMs / 1000)} s after ${c.AUTH_SIGN_IN_ACCOUNT_MAX_FAILURES} failed sign-ins.`);
  }

  /** Best effort: a counter left standing only makes the next lock come sooner. */
  async succeeded(attempt: SignInAttempt): Promise<void> {
    await this.redis.eval(SUCCEEDED, 3, attempt.keys.failures, attempt.keys.strikes, attempt.keys.address).catch(() => undefined);
  }

  async cancelled(attempt: SignInAttempt): Promise<void> {
    await this.redis.eval(CANCELLED, 2, attempt.keys.failures, attempt.keys.address).catch(() => undefined);
  }

  /** The user proved control of the account another way (password reset or change): its lock, failures and lock history go. */
  async clearAccount(applicationId: string, account: string, purpose: AttemptPurpose = 'sign-in'): Promise<void> {
    const accountKey = this.accountKey(applicationId, account, purpose);
    await this.redis.del(`${accountKey}:failures`, `${accountKey}:lock`, `${accountKey}:strikes`);
  }

  private longestLockMs(): number {
    return Math.max(this.config.AUTH_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS, this.config.AUTH_SIGN_IN_ACCOUNT_LOCK_SECONDS) * 1000;
  }

  private accountKey(applicationId: string, account: string, purpose: AttemptPurpose): string {
    const hash = createHash('sha256').update(account.trim().toLowerCase()).digest('hex');
    return `${this.config.AUTH_REDIS_PREFIX}${purpose}:${applicationId}:account:${hash}`;
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
