import { Redis, type RedisOptions } from 'ioredis';

/**
 * What a Redis connection is for. Each role has one set of options, so every process connects
 * the same way for the same job; a site that needs more (a command timeout, lazy connect) says
 * so in `overrides`, next to the reason.
 */
export type RedisRole = 'queue-worker' | 'queue-producer' | 'fail-closed' | 'subscriber' | 'command' | 'publisher' | 'best-effort' | 'heartbeat' | 'probe';

/** Reconnects every 200 ms more, at most every 2 s, forever. */
export const BACKOFF_TO_2S = (attempt: number): number => Math.min(attempt * 200, 2000);

/** The options of each role; README "Connections" says why. */
export const REDIS_ROLES: Readonly<Record<RedisRole, Readonly<RedisOptions>>> = {
  // BullMQ refuses a Worker whose connection gives up on a command: blocking reads wait through an outage.
  'queue-worker': { maxRetriesPerRequest: null },
  // An enqueue fails fast (the caller answers 503) instead of queueing commands while Redis is away.
  'queue-producer': { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: BACKOFF_TO_2S },
  // Counters that bound something (upload slots, sign-in limits): no answer refuses, never waits.
  'fail-closed': { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: BACKOFF_TO_2S },
  // A subscription outlives outages: ioredis resubscribes on reconnect; the subscriber reloads on 'ready'.
  subscriber: { maxRetriesPerRequest: null },
  // Reads and best-effort writes: connect on first use, one retry, then the caller hears the error.
  command: { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 },
  // Best-effort announcements (a missed message is repaired by a reload or a cache expiry).
  publisher: { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 },
  // Writes that are dropped while Redis is away (the edge's metrics): never queued, never retried.
  'best-effort': { enableOfflineQueue: false, maxRetriesPerRequest: 0 },
  // A liveness key renewed on a timer: a beat that cannot be written is skipped, not queued.
  heartbeat: { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: BACKOFF_TO_2S },
  // Readiness checks: one try, no reconnects, no queueing; the probe owns its timeout.
  probe: { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 2000, retryStrategy: () => null },
};

/**
 * The one way a process connects to Redis. `overrides` win over the role's options. The caller
 * owns the connection: its 'error' listener and its `disconnect()`.
 */
export function redisConnection(url: string, role: RedisRole, overrides: RedisOptions = {}): Redis {
  return new Redis(url, { ...REDIS_ROLES[role], ...overrides });
}
