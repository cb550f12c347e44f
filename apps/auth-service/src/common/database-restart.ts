/**
 * A database server restarting (the embedded Postgres after a crash, an operator's failover) is
 * gone for a few seconds. A session read — every page load of a signed-in user — waits that out
 * instead of failing: the read is tried again while the error says the server is not there, up
 * to a deadline (AUTH_DB_RESTART_WAIT_MS); an error of any other kind, or the deadline passed,
 * fails as before. Only for work that is safe to repeat (reads, and get-session's idempotent
 * refresh of a session's end).
 */

import { serverUnavailable } from '@slipway/service-kit';

export { serverUnavailable };

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
