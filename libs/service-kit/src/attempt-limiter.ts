import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** How long a lock is remembered for doubling the next one. */
const STRIKES_TTL_MS = 24 * 3600 * 1000;

/**
 * Failed sign-in attempts, counted per account and per client address, and the account's growing
 * lock: one script for both sign-in surfaces (owners' dashboard, applications' end users), so the
 * two cannot drift. ARGV[1] picks the step; every step gets the same keys and limits.
 * KEYS: account failures, account lock, account strikes, address failures.
 * ARGV: step, account max, account window ms, address max, address window ms, first lock ms,
 * longest lock ms, strikes ttl ms, wait before lock (`coming-lock` or `failure-window`).
 *
 * - reserve: before any password is hashed, so parallel requests cannot all slip in before the
 *   first failure is counted (the reservation is the failure unless the password matches).
 *   Refuses with the ms to wait: {1, ms} = account locked or out of failures, {2, ms} = address.
 *   Out of failures but not locked yet means the last verdicts are still being reached: the wait
 *   is the lock they are about to set (`coming-lock`), or what is left of the failure window.
 * - failed: once the account has used up its failures it is locked; each lock within the strikes
 *   ttl (24 h) of the previous one doubles, up to the longest. Returns the lock's ms, or 0.
 * - succeeded: the account starts afresh (failures and lock history); the address gets back only
 *   this attempt.
 * - cancelled: the attempt never reached a verdict (server busy, database away): the reservation
 *   is given back.
 */
const SCRIPT = `
local failures, lock, strikes, address = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local step = ARGV[1]
local accountMax, addressMax = tonumber(ARGV[2]), tonumber(ARGV[4])
local firstLock, longestLock = tonumber(ARGV[6]), tonumber(ARGV[7])
local function count(key) return tonumber(redis.call('GET', key) or '0') end
local function giveBack(key) if count(key) > 0 then redis.call('DECR', key) end end
local function ttl(key) local t = redis.call('PTTL', key); if t <= 0 then t = 1000 end; return t end

if step == 'reserve' then
  local locked = redis.call('PTTL', lock)
  if locked > 0 then return {1, locked} end
  if count(failures) >= accountMax then
    if ARGV[9] == 'coming-lock' then return {1, math.floor(math.min(firstLock * 2 ^ count(strikes), longestLock))} end
    return {1, ttl(failures)}
  end
  if count(address) >= addressMax then return {2, ttl(address)} end
  if redis.call('INCR', failures) == 1 then redis.call('PEXPIRE', failures, ARGV[3]) end
  if redis.call('INCR', address) == 1 then redis.call('PEXPIRE', address, ARGV[5]) end
  return {0, 0}
elseif step == 'failed' then
  if count(failures) >= accountMax and redis.call('EXISTS', lock) == 0 then
    local n = redis.call('INCR', strikes)
    redis.call('PEXPIRE', strikes, ARGV[8])
    local ms = math.floor(math.min(firstLock * 2 ^ (n - 1), longestLock))
    redis.call('SET', lock, '1', 'PX', ms)
    redis.call('DEL', failures)
    return ms
  end
  return 0
elseif step == 'succeeded' then
  redis.call('DEL', failures, strikes)
  giveBack(address)
  return 0
elseif step == 'cancelled' then
  giveBack(failures)
  giveBack(address)
  return 0
end
return redis.error_reply('attempt limiter: unknown step ' .. tostring(step))`;

/** The limits as configured, in seconds (the shape of the contract's `OwnerSignInLimits`). */
export interface AttemptLimits {
  readonly accountMaxFailures: number;
  readonly accountWindowSeconds: number;
  /** The first lock; each further one within 24 h doubles. */
  readonly accountLockSeconds: number;
  /** The longest lock (never shorter than the first). */
  readonly accountMaxLockSeconds: number;
  readonly addressMaxFailures: number;
  readonly addressWindowSeconds: number;
}

export interface AttemptLimiterOptions {
  readonly limits: AttemptLimits;
  /**
   * What a refused attempt is told to wait while the account is out of failures but its lock is
   * not set yet (the last reserved attempts are still being checked): the lock about to be set
   * (`coming-lock`), or what is left of the failure window (`failure-window`).
   */
  readonly waitBeforeLock: 'coming-lock' | 'failure-window';
}

/** One account's keys and one address's; the layout under them is each caller's (operators delete a lock by name). */
export interface AttemptKeys {
  readonly failures: string;
  readonly lock: string;
  readonly strikes: string;
  readonly address: string;
}

export type AccountKeys = Pick<AttemptKeys, 'failures' | 'lock' | 'strikes'>;

/** `<account>:failures`, `<account>:lock`, `<account>:strikes`. */
export function accountKeys(account: string): AccountKeys {
  return { failures: `${account}:failures`, lock: `${account}:lock`, strikes: `${account}:strikes` };
}

/** How an account (an email, already normalised by the caller, or an id) appears in a key: SHA-256, so no email is kept in Redis. */
export function hashedAccount(account: string): string {
  return createHash('sha256').update(account).digest('hex');
}

export type AttemptVerdict = { readonly refused: false } | { readonly refused: 'account' | 'address'; readonly waitMs: number };

/**
 * Runs the attempt script over a Redis connection the caller owns (and answers for: what a failing
 * Redis means — 500, 503 — is the caller's, as are its errors and log lines). Every step throws
 * when Redis does; callers treat `succeeded`/`cancelled` as best effort.
 */
export class AttemptLimiter {
  private readonly limitArgs: number[];

  constructor(
    private readonly redis: Pick<Redis, 'eval' | 'del'>,
    private readonly options: AttemptLimiterOptions,
  ) {
    const l = options.limits;
    this.limitArgs = [
      l.accountMaxFailures,
      l.accountWindowSeconds * 1000,
      l.addressMaxFailures,
      l.addressWindowSeconds * 1000,
      l.accountLockSeconds * 1000,
      Math.max(l.accountMaxLockSeconds, l.accountLockSeconds) * 1000,
      STRIKES_TTL_MS,
    ];
  }

  /** Reserves an attempt (counted as a failure until it succeeds or is cancelled), or says who is refused and for how long. */
  async reserve(keys: AttemptKeys): Promise<AttemptVerdict> {
    const [refused, waitMs] = (await this.run('reserve', keys)) as [number, number];
    if (!refused) return { refused: false };
    return { refused: refused === 1 ? 'account' : 'address', waitMs };
  }

  /** The secret did not match: locks the account once its failures are used up. Returns the lock's ms, or 0. */
  async failed(keys: AttemptKeys): Promise<number> {
    return Number(await this.run('failed', keys));
  }

  async succeeded(keys: AttemptKeys): Promise<void> {
    await this.run('succeeded', keys);
  }

  async cancelled(keys: AttemptKeys): Promise<void> {
    await this.run('cancelled', keys);
  }

  /** The account's lock, failures and lock history go (its owner proved control another way). */
  async clearAccount(keys: AccountKeys): Promise<void> {
    await this.redis.del(keys.failures, keys.lock, keys.strikes);
  }

  private run(step: 'reserve' | 'failed' | 'succeeded' | 'cancelled', keys: AttemptKeys): Promise<unknown> {
    return this.redis.eval(SCRIPT, 4, keys.failures, keys.lock, keys.strikes, keys.address, step, ...this.limitArgs, this.options.waitBeforeLock);
  }
}
