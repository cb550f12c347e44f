import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  backupLayout,
  blobStoreFor,
  postgresBinaries,
  restoreApplicationDatabase,
  shipWal,
  spoolBytes,
  takeBaseBackup,
  type PostgresBinaries,
} from '@slipway/backup';
import type { BlobStore } from '@slipway/blob';
import { openPlatformData, type PlatformData } from '@slipway/platform-data';
import type { LauncherConfig } from './config.js';
import { log } from './log.js';

const TICK_MS = 5_000;
const PRUNE_EVERY_MS = 60 * 60_000;

export interface BackupServiceOptions {
  home: string;
  /** The embedded server's superuser URL (its `slipway` database) and data directory. */
  serverUrl: string;
  dataDir: string;
  masterKey: string;
  poolerAdminUrl?: string;
  config: Pick<LauncherConfig, 'BACKUP_INTERVAL_HOURS' | 'BACKUP_RETENTION_DAYS'>;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The backups of the embedded Postgres, run by the launcher (which owns that server): ships the
 * WAL the server archives into the spool to the blob store, takes a base backup when none is
 * younger than BACKUP_INTERVAL_HOURS (at once on a platform without one), prunes what is older
 * than BACKUP_RETENTION_DAYS, and runs the restores owners ask for (rows the gateway queues).
 * One thing at a time; every failure is logged on the launcher's output and kept in the catalogue
 * (the dashboard's banner reads it) — never skipped silently.
 */
export class BackupService {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private lastPrune = 0;
  private readonly platform: PlatformData;
  private readonly blobs: BlobStore;
  private binaries?: PostgresBinaries;
  private failingSince?: string;

  constructor(private readonly options: BackupServiceOptions) {
    this.platform = openPlatformData({ DATABASE_URL: options.serverUrl }, { poolSize: 2 });
    this.blobs = blobStoreFor(process.env, options.home);
  }

  async start(): Promise<void> {
    this.binaries = await postgresBinaries();
    await this.clearScratch();
    const interrupted = await this.platform.backups.failInterrupted(new Date());
    const restores = await this.platform.backups.failInterruptedRestores();
    if (interrupted || restores) log('backup', `marked ${interrupted} base backup(s) and ${restores} restore(s) a stop interrupted as failed`);
    log(
      'backup',
      `on: WAL archived continuously, a base backup every ${this.options.config.BACKUP_INTERVAL_HOURS} h, kept ${this.options.config.BACKUP_RETENTION_DAYS} day(s), to the blob store`,
    );
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    void this.tick();
  }

  /** One round (also what tests and `stop` wait for). */
  tick(): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.round()
      .catch((error: unknown) => this.failure('backup round', error))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    await this.ship();
    for (let restore = await this.platform.backups.claimRestore(); restore && !this.stopped; restore = await this.platform.backups.claimRestore())
      await this.restore(restore.id);
    const latest = (await this.platform.backups.bases())[0];
    const due = !latest || Date.now() - (latest.finishedAt ?? latest.startedAt).getTime() > this.options.config.BACKUP_INTERVAL_HOURS * 3600_000;
    const lastFailure = (await this.platform.backups.health()).failure;
    // After a failure, wait a retry period (a tenth of the interval, at most 1 h) instead of failing every tick.
    const retryMs = Math.min(3600_000, this.options.config.BACKUP_INTERVAL_HOURS * 360_000);
    if (due && (!lastFailure || Date.now() - lastFailure.startedAt.getTime() > retryMs)) await this.base();
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) await this.prune();
  }

  private async ship(): Promise<void> {
    try {
      const shipped = await shipWal(this.options.home, this.archive());
      if (this.failingSince) log('backup', `WAL shipping works again (failing since ${this.failingSince})`);
      this.failingSince = undefined;
      if (shipped.files > 5) log('backup', `shipped ${shipped.files} WAL file(s), ${mb(shipped.bytes)}`);
    } catch (error) {
      this.failingSince ??= new Date().toISOString();
      this.failure(`WAL shipping (${mb(await spoolBytes(this.options.home))} waiting in the spool)`, error);
    }
  }

  async base(trigger: 'schedule' | 'operator' = 'schedule'): Promise<void> {
    log('backup', 'base backup: starting');
    let lastReport = 0;
    try {
      const result = await takeBaseBackup({
        ...this.archive(),
        home: this.options.home,
        serverUrl: this.options.serverUrl,
        dataDir: this.options.dataDir,
        trigger,
        onProgress: (bytes) => {
          if (bytes - lastReport < 256 * 1048576) return;
          lastReport = bytes;
          log('backup', `base backup: ${mb(bytes)} so far`);
        },
      });
      log('backup', `base backup ${result.id}: ${mb(result.sizeBytes)} in ${seconds(result.durationMs)} (restorable from ${result.finishedAt.toISOString()})`);
    } catch (error) {
      this.failure('base backup', error);
    }
  }

  private async prune(): Promise<void> {
    this.lastPrune = Date.now();
    const cutoff = new Date(Date.now() - this.options.config.BACKUP_RETENTION_DAYS * 86400_000);
    const pruned = await this.platform.backups.prune(cutoff);
    for (const key of pruned.blobKeys) await this.blobs.delete(key);
    for (const name of pruned.walNames) await this.blobs.delete(`backups/wal/${name}.gz.sealed`);
    if (pruned.blobKeys.length || pruned.walNames.length)
      log(
        'backup',
        `retention: removed ${pruned.blobKeys.length} base backup(s) older than ${this.options.config.BACKUP_RETENTION_DAYS} day(s) and ${pruned.walNames.length} WAL file(s) no kept backup needs`,
      );
  }

  private async restore(id: string): Promise<void> {
    const restore = (await this.platform.backups.findRestore(id))!;
    const database = await this.platform.applications.databases.find(restore.applicationId as never);
    const label = `restore ${id} (application ${restore.applicationId}, to ${restore.targetTime.toISOString()}, ${restore.mode === 'new' ? 'into a new database' : 'in place'})`;
    try {
      if (!database) throw new Error('the application has no database');
      const base = await this.platform.backups.baseBefore(restore.targetTime);
      if (!base?.walStart) throw new Error(`no base backup finished before ${restore.targetTime.toISOString()}`);
      log('backup', `${label}: starting from base backup ${base.id}`);
      const result = await restoreApplicationDatabase(
        {
          ...this.archive(),
          home: this.options.home,
          serverUrl: this.options.serverUrl,
          binaries: this.binaries!,
          database,
          target: restore.targetTime,
          mode: restore.mode,
          poolerAdminUrl: this.options.poolerAdminUrl,
          onStep: (step) => {
            log('backup', `${label}: ${step}`);
            void this.platform.backups.restoreStep(id, step).catch(() => undefined);
          },
        },
        { id: base.id, walStart: base.walStart },
      );
      await this.platform.backups.finishRestore(id, result);
      log(
        'backup',
        `${label}: done in ${seconds(result.durationMs)}, ${result.rows} rows, ${mb(result.sizeBytes)}${result.keptDatabase ? `; the database it replaced is kept as ${result.keptDatabase}` : `; restored as ${result.databaseName}`}`,
      );
    } catch (error) {
      await this.platform.backups.failRestore(id, ownerMessage(error, id)).catch(() => undefined);
      this.failure(label, error);
    }
  }

  private archive() {
    return { blobs: this.blobs, backups: this.platform.backups, masterKey: this.options.masterKey };
  }

  private failure(what: string, error: unknown): void {
    log('backup', `FAILED: ${what}: ${(error as Error)?.message ?? String(error)}`);
  }

  /** Waits up to 5 s for the round in progress (a long restore is failed instead, and marked so at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    await this.platform.close().catch(() => undefined);
  }

  /** Scratch servers of restores a stop interrupted: stopped, their folders removed. */
  private async clearScratch(): Promise<void> {
    const root = backupLayout.scratch(this.options.home);
    for (const name of await readdir(root).catch(() => [] as string[])) {
      const pidFile = join(root, name, 'data', 'postmaster.pid');
      const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
      // Only a postmaster of this very folder (a pid reused by another process is left alone).
      const cmdline = pid > 0 ? await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '') : '';
      if (cmdline.includes(join(root, name))) {
        try {
          process.kill(pid, 'SIGQUIT');
          await new Promise((resolve) => setTimeout(resolve, 1000));
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await rm(join(root, name), { recursive: true, force: true });
      log('backup', `removed the scratch server of an interrupted restore (${name})`);
    }
  }
}

/** What the owner reads of a failed restore: what they can act on; the rest (paths, server logs) stays in the launcher's log. */
function ownerMessage(error: unknown, id: string): string {
  const name = (error as Error)?.name;
  if (name === 'RestoreRefusedError' || name === 'UnsupportedObjectsError' || name === 'BackupCorruptError') return (error as Error).message;
  if (/no base backup finished before/.test((error as Error)?.message ?? '')) return (error as Error).message;
  return `the restore failed on the platform's side; nothing was replaced (the operator's log has the details under restore ${id})`;
}
