/**
 * A database server restarting (the embedded Postgres after a crash, an operator's failover) is
 * gone for a few seconds. A session read — every page load of a signed-in user — waits that out
 * instead of failing: the read is tried again while the error says the server is not there, up
 * to a deadline (AUTH_DB_RESTART_WAIT_MS); an error of any other kind, or the deadline passed,
 * fails as before. Only for work that is safe to repeat (reads, and get-session's idempotent
 * refresh of a session's end).
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

/** Runs `work` again (after 100 ms, doubling up to 1 s) while it fails because the server is away, for at most `waitMs`. */
export async function throughRestart<T>(work: () => Promise<T>, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await work();
    } catch (error) {
      if (!serverUnavailable(error) || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
