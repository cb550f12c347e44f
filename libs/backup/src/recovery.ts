import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { unsealStream } from '@slipway/crypto';
import { backupLayout } from './layout.js';
import { giveToPostgres, postgresUser, type PostgresBinaries } from './postgres-binaries.js';
import { fetchWal, type WalArchive } from './wal-archive.js';
import { pgClient } from './pg-client.js';

export class BackupCorruptError extends Error {
  override readonly name = 'BackupCorruptError';
}

export type RecoveryTarget = { time: Date } | 'end';

export interface RecoveredServer {
  /** Connection string of a database on the recovered server (a Unix socket only it uses). */
  url(database: string): string;
  dataDir: string;
  stop(): Promise<void>;
}

/** Extracts a sealed, gzip'd tar stream into `dir` with GNU tar; a damaged stream fails with BackupCorruptError. */
export async function extractSealedTar(source: NodeJS.ReadableStream, masterKey: string, binding: string, dir: string): Promise<void> {
  const tar = spawn('tar', ['-C', dir, '-xf', '-', '--no-same-owner', '--ignore-zeros'], { stdio: ['pipe', 'ignore', 'pipe'] });
  const errors: string[] = [];
  tar.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
  const exited = once(tar, 'close') as Promise<[number | null]>;
  try {
    await pipeline(source, unsealStream(masterKey, binding), createGunzip(), tar.stdin);
  } catch (error) {
    tar.kill('SIGKILL');
    await exited.catch(() => undefined);
    throw corrupt(error, binding);
  }
  const [code] = await exited;
  if (code !== 0) throw new Error(`tar could not extract ${binding} (exit ${code}): ${errors.join('').trim().slice(0, 500)}`);
}

export function corrupt(error: unknown, what: string): Error {
  const name = (error as Error)?.name;
  if (name === 'SealError' || (error as NodeJS.ErrnoException)?.code === 'Z_DATA_ERROR' || (error as NodeJS.ErrnoException)?.code === 'Z_BUF_ERROR') {
    return new BackupCorruptError(`backup ${what} is damaged and was refused: ${(error as Error).message}`);
  }
  return error as Error;
}

export interface RecoverOptions extends WalArchive {
  /** The home whose spool may hold WAL not shipped yet (a live platform's); none for a backup from elsewhere. */
  home?: string;
  base: { id: string; walStart: string };
  binaries: PostgresBinaries;
  /** An empty folder to recover into (removed by the caller). */
  dir: string;
  target: RecoveryTarget;
  onStep?: (step: string) => void;
  /** At least the backed-up server's max_connections (recovery refuses a lower setting); default 1000. */
  maxConnections?: number;
}

/**
 * Restores a base backup and replays the archived WAL up to the target in a server of its own
 * (its own folder, a Unix socket in it, no TCP): the live server is never touched. Answers the
 * running, promoted server.
 */
export async function recoverServer(options: RecoverOptions): Promise<RecoveredServer> {
  const dataDir = join(options.dir, 'data');
  const walDir = join(options.dir, 'wal');
  const socketDir = join(options.dir, 'socket');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(walDir, { recursive: true, mode: 0o700 });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  options.onStep?.('fetching the base backup');
  await extractSealedTar(await options.blobs.get(backupLayout.baseKey(options.base.id)), options.masterKey, backupLayout.baseBinding(options.base.id), dataDir);
  let label: Buffer;
  try {
    label = await unsealToBuffer(
      await options.blobs.get(backupLayout.labelKey(options.base.id)),
      options.masterKey,
      backupLayout.labelBinding(options.base.id),
    );
  } catch (error) {
    throw corrupt(error, `label ${options.base.id}`);
  }
  await writeFile(join(dataDir, 'backup_label'), label);
  options.onStep?.('fetching the WAL');
  try {
    await fetchWal(options.home, options, options.base.walStart, walDir);
  } catch (error) {
    throw corrupt(error, 'WAL');
  }
  await prepareRecovery(dataDir, walDir, options.target);
  options.onStep?.('replaying the WAL');
  return startRecovered(options.binaries, dataDir, socketDir, options.dir, options.maxConnections);
}

/** Recovery settings in the restored data directory: WAL from `walDir`, to the target, then promote; only local connections (trust, in a private folder). */
export async function prepareRecovery(dataDir: string, walDir: string, target: RecoveryTarget): Promise<void> {
  await rename(join(dataDir, 'pg_hba.conf'), join(dataDir, 'pg_hba.conf.before-restore')).catch(() => undefined);
  await writeFile(join(dataDir, 'pg_hba.conf'), 'local all all trust\n');
  const settings = [
    `restore_command = 'cp "${walDir}/%f" "%p"'`,
    `recovery_target_action = 'promote'`,
    ...(target === 'end'
      ? []
      : [`recovery_target_time = '${target.time.toISOString().replace('T', ' ').replace('Z', '+00')}'`, `recovery_target_inclusive = false`]),
  ];
  await appendFile(join(dataDir, 'postgresql.auto.conf'), `\n# slipway restore\n${settings.join('\n')}\n`);
  await writeFile(join(dataDir, 'recovery.signal'), '');
  await mkdir(join(dataDir, 'pg_wal'), { recursive: true });
  await chmod(dataDir, 0o700);
}

export async function startRecovered(
  binaries: PostgresBinaries,
  dataDir: string,
  socketDir: string,
  dir: string,
  maxConnections = 1000,
): Promise<RecoveredServer> {
  const user = postgresUser();
  await giveToPostgres(dir, user);
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const log: string[] = [];
  const child: ChildProcess = spawn(
    binaries.postgres,
    [
      '-D',
      dataDir,
      '-c',
      `port=${port}`,
      '-c',
      'listen_addresses=',
      '-c',
      `unix_socket_directories=${socketDir}`,
      '-c',
      'archive_mode=off',
      '-c',
      `max_connections=${Math.max(1000, maxConnections)}`,
      '-c',
      'shared_buffers=32MB',
      '-c',
      'fsync=off',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    },
  );
  const keep = (chunk: Buffer) => {
    log.push(chunk.toString());
    if (log.length > 200) log.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const url = (database: string) => `postgresql://slipway@/${encodeURIComponent(database)}?host=${encodeURIComponent(socketDir)}&port=${port}`;
  const stop = async () => {
    if (exited !== undefined) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await once(child, 'exit').catch(() => undefined);
    clearTimeout(timer);
  };
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`the restore server stopped (exit ${exited}): ${lastLines(log)}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the restore did not finish within 10 minutes: ${lastLines(log)}`);
    }
    const client = pgClient(url('postgres'));
    try {
      await client.connect();
      const state = await client.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering');
      if (!state.rows[0]!.recovering) return { url, dataDir, stop };
    } catch {
      // not accepting connections yet (replaying)
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function lastLines(log: string[]): string {
  return log.join('').trim().split('\n').slice(-6).join(' | ').slice(0, 1500);
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** After a recovered server stopped: its own pg_hba.conf back, the restore's settings gone (a data directory to run for good). */
export async function finishRecovery(dataDir: string): Promise<void> {
  await rename(join(dataDir, 'pg_hba.conf.before-restore'), join(dataDir, 'pg_hba.conf'));
  const file = join(dataDir, 'postgresql.auto.conf');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/\n# slipway restore\n[\s\S]*$/, '\n'));
}

/** A whole sealed stream, opened and checked (a small one: a backup label); `keep: false` checks only. */
export async function unsealToBuffer(source: NodeJS.ReadableStream, masterKey: string, binding: string, keep = true): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(
    source,
    unsealStream(masterKey, binding),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (keep) parts.push(chunk);
        callback();
      },
    }),
  );
  return Buffer.concat(parts);
}
