/**
 * Whether an error means a dependency's server is not there right now (Postgres or Redis
 * restarting, a failover), not that the request or the query was wrong: such a failure is a 503
 * `unavailable` (retry shortly), not a 500, and a read may wait it out (auth-service's
 * throughRestart).
 */
/** node-postgres and Prisma errors that mean "no server right now", not "this query is wrong". */
const SERVER_GONE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  // SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now (starting up, in recovery).
  '57P01',
  '57P02',
  '57P03',
  // SQLSTATE class 08: connection exceptions.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  // Prisma: can't reach the server, timed out reaching it, server closed the connection.
  'P1001',
  'P1002',
  'P1017',
]);

/** What `@prisma/adapter-pg` calls a socket error (refused, reset, timed out) in `meta.driverAdapterError.cause.kind`. */
const SERVER_GONE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);

/** ioredis: a command given up on while the connection is down (its retries per request spent), or sent on a closed connection. */
const REDIS_GONE_NAMES = new Set(['MaxRetriesPerRequestError']);

const SERVER_GONE_MESSAGE =
  /Reached the max retries per request limit|Connection is closed\.|Stream isn't writeable|Connection terminated|connection timeout|Can't reach database server|Server has closed the connection|server closed the connection unexpectedly|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|Client has encountered a connection error/i;

export function serverUnavailable(error: unknown): boolean {
  // The error itself, what caused it, and what Prisma's driver adapter says under `meta`.
  const pending: unknown[] = [error];
  for (let seen = 0; pending.length && seen < 8; seen++) {
    const e = pending.shift() as
      { code?: unknown; message?: unknown; kind?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } } | null | undefined;
    if (!e || typeof e !== 'object') continue;
    if (typeof e.code === 'string' && SERVER_GONE_CODES.has(e.code)) return true;
    if (typeof e.kind === 'string' && SERVER_GONE_KINDS.has(e.kind)) return true;
    if (typeof (e as { name?: unknown }).name === 'string' && REDIS_GONE_NAMES.has((e as { name: string }).name)) return true;
    if (typeof e.message === 'string' && SERVER_GONE_MESSAGE.test(e.message)) return true;
    pending.push(e.cause, e.meta?.driverAdapterError);
  }
  return false;
}
