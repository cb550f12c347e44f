import { redisConnection } from '@slipway/messaging';
import pg from 'pg';

/** Thrown when a process cannot start; printed as one line, never with a stack. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Hides the password of a connection URL so it can be printed. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

export async function pingPostgres(url: string, timeoutMs = 2000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function pingRedis(url: string, timeoutMs = 2000): Promise<void> {
  const redis = redisConnection(url, 'probe', { connectTimeout: timeoutMs });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/**
 * Waits (up to `timeoutMs`) for Postgres and Redis to answer, so a misconfigured process stops
 * at boot with one line naming the variable instead of failing on its first request.
 */
export async function waitForDependencies(deps: { postgresUrl?: string; redisUrl?: string }, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const checks: [string, string, (url: string) => Promise<void>][] = [];
  if (deps.postgresUrl) checks.push(['DATABASE_URL', deps.postgresUrl, (u) => pingPostgres(u)]);
  if (deps.redisUrl) checks.push(['REDIS_URL', deps.redisUrl, (u) => pingRedis(u)]);
  for (const [variable, url, ping] of checks) {
    for (;;) {
      try {
        await ping(url);
        break;
      } catch (error) {
        if (Date.now() >= deadline) {
          const what = variable === 'REDIS_URL' ? 'Redis' : 'Postgres';
          throw new StartupError(`${what} at ${redactUrl(url)} is not answering (${oneLine(error)}); check ${variable}`);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}

export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  const aggregate = error instanceof AggregateError && error.errors.length ? oneLine(error.errors[0]) : '';
  return (message || aggregate).split('\n')[0]!.trim();
}
