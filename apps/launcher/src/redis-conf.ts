/** What the launcher's own redis-server runs with; written to a 0600 file, never passed as argv. */
export interface OwnRedisSettings {
  port: number;
  password: string;
  dir: string;
}

/** A redis.conf string value: quoted, with `\` and `"` escaped (Redis's own config syntax). */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Loopback only, a password for every client (so `ps` shows none, it lives here and not in argv),
 * and what BullMQ needs to lose no job: an append-only file and no eviction.
 */
export function ownRedisConf({ port, password, dir }: OwnRedisSettings): string {
  return [
    '# Written by the Slipway launcher at every start (edits are lost). Holds the password: keep it 0600.',
    'bind 127.0.0.1',
    `port ${port}`,
    'protected-mode yes',
    `requirepass ${quoted(password)}`,
    `dir ${quoted(dir)}`,
    'appendonly yes',
    'appendfsync everysec',
    'save ""',
    'maxmemory-policy noeviction',
    'daemonize no',
    'logfile ""',
    // `ps` then shows the real argv (the path of this file): what a test can hold to "no secret in argv".
    'set-proc-title no',
    '',
  ].join('\n');
}

/** The port a previous start wrote into redis.conf (to find a redis-server a killed launcher left running). */
export function portOfConf(conf: string): number | undefined {
  const match = /^port (\d+)$/m.exec(conf);
  return match ? Number(match[1]) : undefined;
}

export function ownRedisUrl(port: number, password: string): string {
  return `redis://:${encodeURIComponent(password)}@127.0.0.1:${port}`;
}
