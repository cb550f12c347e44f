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

const SERVER_GONE_MESSAGE = /Connection terminated|connection timeout|Can't reach database server|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|Client has encountered a connection error/i;

export function serverUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SERVER_GONE_CODES.has(code)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && SERVER_GONE_MESSAGE.test(message)) return true;
  }
  return false;
}

