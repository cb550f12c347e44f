import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redisConnection } from '@slipway/messaging';
import { StartupError, oneLine, pingRedis, redactUrl } from './errors.js';
import { log } from './log.js';
import { freeLoopbackPort } from './ports.js';
import { ensurePrivateDir, ensureSecretFile, writePrivateFile } from './private-files.js';
import { ownRedisConf, ownRedisUrl, portOfConf } from './redis-conf.js';

export interface RedisHandle {
  /** What services get as REDIS_URL (with the password when it is the launcher's own Redis). */
  url: string;
  /** Set when the launcher runs redis-server itself (the current one, after a restart too). */
  readonly pid?: number;
  stop(): Promise<void>;
}

export interface RedisSupervision {
  /** Called after the launcher's own redis-server was restarted; resolves once runtime.json names the new pid. */
  onRestart(): Promise<void>;
  /** More than 5 unexpected exits within a minute: one line, and everything stops. */
  onCrashLoop(line: string): void;
}

const INSTALL = 'install redis-server (e.g. `apt-get install redis-server`, `brew install redis`) so Slipway runs its own under .slipway/redis';
const START_ATTEMPTS = 3;

/**
 * REDIS_URL when the operator set it (it must answer; a warning when it has no password).
 * Otherwise always the launcher's own redis-server: a free loopback port, a generated password
 * kept in `.slipway/redis/password`, AOF and no eviction — never an open Redis found by chance.
 */
export async function startRedis(home: string, redisUrl: string | undefined, supervision?: RedisSupervision): Promise<RedisHandle> {
  return redisUrl ? useOperatorRedis(redisUrl) : startOwnRedis(join(home, 'redis'), supervision);
}

async function useOperatorRedis(url: string): Promise<RedisHandle> {
  try {
    await pingRedis(url);
  } catch (error) {
    throw new StartupError(`Redis at ${redactUrl(url)} (REDIS_URL) is not answering (${oneLine(error)}). Start it, or unset REDIS_URL and ${INSTALL}.`);
  }
  if (!new URL(url).password) {
    log(
      'launcher',
      `warning: REDIS_URL (${redactUrl(url)}) has no password: anything that reaches that address can read and rewrite the platform's queues. Give it one (requirepass) and put it in the URL (redis://:PASSWORD@host:port), or unset REDIS_URL so Slipway runs its own with a generated one.`,
    );
  }
  await warnUnlessDurable(url);
  return { url, stop: async () => undefined };
}

/**
 * The queue holds accepted deploys: an operator's Redis must keep them across its own restart
 * (`appendonly yes`) and never evict them under memory pressure (`maxmemory-policy noeviction`).
 * One warning line per setting that is otherwise (or cannot be read: CONFIG renamed or denied).
 */
export async function warnUnlessDurable(url: string): Promise<string[]> {
  // A probe that queues its commands until the lazy connection is up (it sends them before connecting).
  const redis = redisConnection(url, 'probe', { enableOfflineQueue: true });
  redis.on('error', () => undefined);
  const warnings: string[] = [];
  try {
    await redis.connect();
    const read = async (name: string) => ((await redis.config('GET', name)) as string[])[1];
    const appendonly = await read('appendonly');
    const policy = await read('maxmemory-policy');
    if (appendonly !== 'yes')
      warnings.push(
        `warning: REDIS_URL (${redactUrl(url)}) has appendonly ${appendonly ?? 'unset'}: a restart of that Redis loses accepted deploys still in the queue. Set \`appendonly yes\` (and \`appendfsync everysec\`) in its configuration.`,
      );
    if (policy !== 'noeviction')
      warnings.push(
        `warning: REDIS_URL (${redactUrl(url)}) has maxmemory-policy ${policy ?? 'unset'}: under memory pressure it may evict queued deploys. Set \`maxmemory-policy noeviction\`.`,
      );
  } catch (error) {
    warnings.push(
      `warning: could not read the configuration of REDIS_URL (${redactUrl(url)}) (${oneLine(error)}): make sure it runs with \`appendonly yes\` and \`maxmemory-policy noeviction\`, or accepted deploys can be lost.`,
    );
  } finally {
    redis.disconnect();
  }
  for (const line of warnings) log('launcher', line);
  return warnings;
}

async function startOwnRedis(dir: string, supervision?: RedisSupervision): Promise<RedisHandle> {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const binary = found.stdout.trim();
  if (found.status !== 0 || !binary)
    throw new StartupError(`REDIS_URL is not set and redis-server is not on PATH: ${INSTALL}, or set REDIS_URL to a Redis you run (with a password).`);
  await ensurePrivateDir(dir);
  const password = await ensureSecretFile(join(dir, 'password'), 24);
  const confFile = join(dir, 'redis.conf');
  await stopLeftover(confFile, password);

  for (let attempt = 1; ; attempt++) {
    // The OS's free port may be taken again before redis-server binds it: then try another.
    const port = await freeLoopbackPort();
    await writePrivateFile(confFile, ownRedisConf({ port, password, dir }));
    const child = spawn(binary, [confFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const output = collectOutput(child, password);
    const url = ownRedisUrl(port, password);
    const failure = await waitUntilAnswering(child, url);
    if (!failure) {
      log('launcher', `started redis-server on 127.0.0.1:${port} (password in ${join(dir, 'password')}, data in ${dir})`);
      return superviseRedis(child, { binary, confFile, url, port, password }, supervision);
    }
    child.kill('SIGKILL');
    const reason = output.lastLine() || failure;
    if (attempt < START_ATTEMPTS && /address already in use/i.test(output.text())) continue;
    throw new StartupError(
      `redis-server did not start on 127.0.0.1:${port} (${reason}). Set SLIPWAY_DEBUG=1 to see its log, or set REDIS_URL to a Redis you run.`,
    );
  }
}

/**
 * The launcher's own redis-server, restarted when it exits unexpectedly: the same redis.conf (same
 * port and password), so it reloads its append-only file and no accepted deploy is lost; services
 * reconnect by themselves. More than 5 exits within a minute is a crash loop.
 */
function superviseRedis(
  first: ChildProcess,
  server: { binary: string; confFile: string; url: string; port: number; password: string },
  supervision?: RedisSupervision,
): RedisHandle {
  let child = first;
  let stopping = false;
  const crashes: number[] = [];
  const watch = (current: ChildProcess) =>
    current.once('exit', (code, signal) => {
      if (stopping || current !== child || !supervision) return;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && now - crashes[0]! > 60_000) crashes.shift();
      const reason = signal ?? `code ${code}`;
      if (crashes.length > 5)
        return supervision.onCrashLoop(
          `redis-server crashed ${crashes.length} times within 60 s (last: ${reason}); not restarting it again: stopping everything`,
        );
      log('launcher', `redis-server exited unexpectedly (${reason}); restarting it on 127.0.0.1:${server.port} from its append-only file`);
      void restart(now);
    });
  const restart = async (downSince: number) => {
    await new Promise((r) => setTimeout(r, 100 * 2 ** (crashes.length - 1)));
    if (stopping) return;
    const next = spawn(server.binary, [server.confFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const output = collectOutput(next, server.password);
    child = next;
    watch(next);
    // "is back" is said only once runtime.json names the new process (tests and operators read it).
    const published = supervision?.onRestart();
    const failure = await waitUntilAnswering(next, server.url);
    await published;
    if (failure) log('launcher', `redis-server did not come back (${output.lastLine() || failure})`);
    else log('launcher', `redis-server is back (pid ${next.pid}): answering ${((Date.now() - downSince) / 1000).toFixed(1)} s after it went down`);
  };
  watch(first);
  return {
    url: server.url,
    get pid() {
      return child.pid;
    },
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
}

/** Waits up to 10 s for an authenticated PING; returns why it failed, or undefined once it answers. */
async function waitUntilAnswering(child: ChildProcess, url: string): Promise<string | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await pingRedis(url);
      return undefined;
    } catch (error) {
      if (child.exitCode !== null || child.signalCode !== null) return `exited with ${child.signalCode ?? `code ${child.exitCode}`}`;
      if (Date.now() > deadline) return oneLine(error);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * A launcher killed with SIGKILL leaves its redis-server running (it is detached so that Ctrl-C
 * reaches it only through the launcher). One that answers our password at the port of the last
 * redis.conf is ours: shut it down so two servers never share the append-only file.
 */
async function stopLeftover(confFile: string, password: string): Promise<void> {
  const port = portOfConf(await readFile(confFile, 'utf8').catch(() => ''));
  if (!port) return;
  const url = ownRedisUrl(port, password);
  try {
    await pingRedis(url, 500);
  } catch {
    return;
  }
  const redis = redisConnection(url, 'probe', { enableOfflineQueue: true, connectTimeout: 10_000 });
  redis.on('error', () => undefined);
  await redis.connect();
  await redis.shutdown().catch(() => undefined);
  redis.disconnect();
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      await pingRedis(url, 500);
    } catch {
      log('launcher', `stopped the redis-server an earlier launcher left running on 127.0.0.1:${port}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new StartupError(`the redis-server an earlier launcher left on 127.0.0.1:${port} does not stop; stop it, then start again`);
}

/** Keeps redis-server's last output line for error messages (shown whole with SLIPWAY_DEBUG), the password masked. */
function collectOutput(child: ChildProcess, password: string): { lastLine(): string; text(): string } {
  const tail: string[] = [];
  const debug = Boolean(process.env['SLIPWAY_DEBUG']);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = chunk
        .split(password)
        .join('***')
        .split('\n')
        .filter((l) => l.trim());
      tail.push(...lines.map((l) => l.trim()));
      tail.splice(0, Math.max(0, tail.length - 20));
      if (debug) for (const line of lines) log('redis', line);
    });
  }
  return { lastLine: () => tail.at(-1) ?? '', text: () => tail.join('\n') };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
