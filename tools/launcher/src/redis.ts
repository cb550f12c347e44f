import { spawn, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StartupError, oneLine, pingRedis, redactUrl } from './errors.js';
import { log, pipeLines } from './log.js';
import { isPortFree } from './ports.js';

export interface RedisHandle {
  url: string;
  /** Set when the launcher runs redis-server itself. */
  pid?: number;
  stop(): Promise<void>;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

const FIXES = 'Either start Redis yourself and set REDIS_URL to it, or install redis-server (e.g. `apt-get install redis-server`, `brew install redis`) so Slipway can start one under .slipway/';

/**
 * REDIS_URL when given (it must answer). Otherwise the default address; if nothing answers there,
 * starts `redis-server` from PATH under `.slipway/redis`, or stops with both fixes named.
 */
export async function startRedis(home: string, redisUrl: string | undefined): Promise<RedisHandle> {
  const url = redisUrl ?? DEFAULT_URL;
  try {
    await pingRedis(url);
    return { url, stop: async () => undefined };
  } catch (error) {
    if (redisUrl) throw new StartupError(`Redis at ${redactUrl(redisUrl)} (REDIS_URL) is not answering (${oneLine(error)}). ${FIXES}.`);
  }
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const binary = found.stdout.trim();
  if (found.status !== 0 || !binary) throw new StartupError(`no Redis answers at ${DEFAULT_URL} and redis-server is not on PATH. ${FIXES}.`);

  const port = (await isPortFree(6379)) ? 6379 : 6390;
  const dir = join(home, 'redis');
  await mkdir(dir, { recursive: true });
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (process.env['SLIPWAY_DEBUG']) {
    pipeLines('redis', child.stdout!);
    pipeLines('redis', child.stderr!);
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  const startedUrl = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await pingRedis(startedUrl);
      break;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new StartupError(`redis-server did not start on port ${port} (${oneLine(error)}). ${FIXES}.`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  log('launcher', `started redis-server on 127.0.0.1:${port} (data in ${dir})`);
  return {
    url: startedUrl,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
