import { spawn } from 'node:child_process';
import { Readable, Transform, pipeline as chain } from 'node:stream';
import { createGzip } from 'node:zlib';
import { sealStream } from '@slipway/crypto';
import type { BackupTrigger } from '@slipway/platform-data';
import { backupLayout } from './layout.js';
import { shipWal, type WalArchive } from './wal-archive.js';
import { pgClient } from './pg-client.js';

export interface BaseBackupOptions extends WalArchive {
  home: string;
  /** A superuser connection to the server (the embedded one). */
  serverUrl: string;
  dataDir: string;
  trigger: BackupTrigger;
  onProgress?: (bytes: number) => void;
}

export interface BaseBackupResult {
  id: string;
  sizeBytes: number;
  walStart: string;
  finishedAt: Date;
  durationMs: number;
}

/** What a base backup leaves out of the data directory (PostgreSQL's "Making a Base Backup Using the Low Level API"). */
const EXCLUDED = [
  './pg_wal/*',
  './postmaster.pid',
  './postmaster.opts',
  './pg_replslot/*',
  './pg_dynshmem/*',
  './pg_notify/*',
  './pg_serial/*',
  './pg_snapshots/*',
  './pg_stat_tmp/*',
  './pg_subtrans/*',
  '*/pgsql_tmp*',
  './backup_label',
  './tablespace_map',
  './recovery.signal',
  './standby.signal',
];

/**
 * A base backup of the whole server while it serves: `pg_backup_start` (fast checkpoint), the data
 * directory through GNU tar, gzip and a sealed stream into the blob store, `pg_backup_stop` (which
 * waits until the WAL the backup needs is archived), then the backup label beside it. Catalogued
 * `running` first, so that an interrupted one shows as failed, never as absent.
 */
export async function takeBaseBackup(options: BaseBackupOptions): Promise<BaseBackupResult> {
  const started = Date.now();
  const id = await options.backups.startBase(options.trigger);
  const client = pgClient(options.serverUrl);
  try {
    await client.connect();
    const start = await client.query<{ wal: string }>(`SELECT pg_walfile_name(pg_backup_start($1, true)) AS wal`, [`slipway-${id}`]);
    const walStart = start.rows[0]!.wal;
    let sent = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sent += chunk.length;
        options.onProgress?.(sent);
        callback(null, chunk);
      },
    });
    const tar = spawn(
      'tar',
      ['-C', options.dataDir, '-cf', '-', ...EXCLUDED.map((pattern) => `--exclude=${pattern}`), '--warning=no-file-changed', '--warning=no-file-removed', '.'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const tarErrors: string[] = [];
    tar.stderr.on('data', (chunk: Buffer) => tarErrors.push(chunk.toString()));
    const exited = new Promise<number>((resolve) => tar.on('close', (code) => resolve(code ?? 2)));
    // Chained, not piped: an error anywhere fails the put instead of going unhandled.
    const sealed = chain(tar.stdout, createGzip({ level: 3 }), sealStream(options.masterKey, backupLayout.baseBinding(id)), count, () => undefined);
    const stored = await options.blobs.put(backupLayout.baseKey(id), sealed, { digest: false });
    // 1: files changed while read — expected; the WAL replay makes them consistent.
    const code = await exited;
    if (code > 1) throw new Error(`tar of the data directory failed (exit ${code}): ${tarErrors.join('').trim().slice(0, 500)}`);
    const stop = await client.query<{ labelfile: string; finished: Date }>(`SELECT labelfile, clock_timestamp() AS finished FROM pg_backup_stop(true)`);
    const { labelfile, finished } = stop.rows[0]!;
    await options.blobs.put(
      backupLayout.labelKey(id),
      Readable.from([Buffer.from(labelfile)]).pipe(sealStream(options.masterKey, backupLayout.labelBinding(id))),
      { digest: false },
    );
    await shipWal(options.home, options);
    const result = { id, sizeBytes: stored.bytes, walStart, finishedAt: finished, durationMs: Date.now() - started };
    await options.backups.finishBase(id, { blobKey: backupLayout.baseKey(id), sizeBytes: stored.bytes, walStart, finishedAt: finished });
    return result;
  } catch (error) {
    await options.backups.fail(id, (error as Error).message).catch(() => undefined);
    await options.blobs.delete(backupLayout.baseKey(id)).catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Forces the current WAL file out (so that everything up to now is archived) and waits until the server archived it. */
export async function archiveNow(serverUrl: string, timeoutMs = 60_000): Promise<string> {
  const client = pgClient(serverUrl);
  await client.connect();
  try {
    const switched = await client.query<{ wal: string }>(`SELECT pg_walfile_name(pg_switch_wal()) AS wal`);
    const wal = switched.rows[0]!.wal;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await client.query<{ last: string | null; failed: string | null }>(
        `SELECT last_archived_wal AS last, last_failed_wal AS failed FROM pg_stat_archiver`,
      );
      const last = state.rows[0]?.last;
      if (last && last.slice(8) >= wal.slice(8)) return wal;
      if (Date.now() > deadline)
        throw new Error(
          `the server did not archive WAL file ${wal} within ${timeoutMs / 1000} s (last archived: ${last ?? 'none'}, last failed: ${state.rows[0]?.failed ?? 'none'})`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
