import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/platform-schema';
import type { ApplicationId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';

export type BackupTrigger = 'schedule' | 'operator' | 'owner';

/** A base backup of the whole server, or a named restore point. */
export interface BackupRow {
  id: string;
  kind: 'base' | 'restore_point';
  status: 'running' | 'succeeded' | 'failed';
  trigger: BackupTrigger;
  applicationId: string | null;
  label: string | null;
  blobKey: string | null;
  sizeBytes: number | null;
  walStart: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  error: string | null;
}

export interface RestoreRow {
  id: string;
  applicationId: string;
  targetTime: Date;
  mode: 'in_place' | 'new';
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  step: string | null;
  databaseName: string | null;
  keptDatabase: string | null;
  sizeBytes: number | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export class RestoreInProgressError extends Error {
  override readonly name = 'RestoreInProgressError';
}

const toBackup = (row: { sizeBytes: bigint | null } & Omit<BackupRow, 'sizeBytes'>): BackupRow => ({
  ...row,
  sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
});
const toRestore = (row: { sizeBytes: bigint | null } & Omit<RestoreRow, 'sizeBytes'>): RestoreRow => ({
  ...row,
  sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
});

/**
 * The backup catalogue (issue 31): base backups, restore points, archived WAL files and owners'
 * restores. Every query of the platform database on these tables lives here.
 */
@Injectable()
export class BackupsRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}

  private get prisma() {
    return this.platform.prisma;
  }

  async startBase(trigger: BackupTrigger): Promise<string> {
    const row = await this.prisma.backup.create({ data: { kind: 'base', status: 'running', trigger }, select: { id: true } });
    return row.id;
  }

  async finishBase(id: string, done: { blobKey: string; sizeBytes: number; walStart: string; finishedAt: Date }): Promise<void> {
    await this.prisma.backup.update({
      where: { id },
      data: { status: 'succeeded', blobKey: done.blobKey, sizeBytes: BigInt(done.sizeBytes), walStart: done.walStart, finishedAt: done.finishedAt },
    });
  }

  async fail(id: string, error: string): Promise<void> {
    await this.prisma.backup.update({ where: { id }, data: { status: 'failed', error: error.slice(0, 2000), finishedAt: new Date() } });
  }

  /** Base backups a process killed mid-way left `running`: failed, so that they show. */
  async failInterrupted(olderThan: Date): Promise<number> {
    const { count } = await this.prisma.backup.updateMany({
      where: { status: 'running', startedAt: { lt: olderThan } },
      data: { status: 'failed', error: 'interrupted (the backup service stopped while it ran)', finishedAt: new Date() },
    });
    return count;
  }

  /** A named point in the WAL (`pg_create_restore_point`; the platform's role is the server's superuser) and its row. */
  async markRestorePoint(applicationId: ApplicationId, label: string): Promise<BackupRow> {
    // Named in the WAL where the platform's role may (the embedded server's superuser); the time is what a restore uses.
    await this.platform.pool.query(`SELECT pg_create_restore_point($1)`, [`slipway:${applicationId}:${label}`.slice(0, 63)]).catch(() => undefined);
    const at = (await this.platform.pool.query<{ at: Date }>(`SELECT clock_timestamp() AS at`)).rows[0]!.at;
    return this.addRestorePoint({ trigger: 'owner', applicationId, label, at });
  }

  async addRestorePoint(point: { trigger: BackupTrigger; applicationId: ApplicationId | null; label: string; at: Date }): Promise<BackupRow> {
    const row = await this.prisma.backup.create({
      data: {
        kind: 'restore_point',
        status: 'succeeded',
        trigger: point.trigger,
        applicationId: point.applicationId,
        label: point.label,
        startedAt: point.at,
        finishedAt: point.at,
      },
    });
    return toBackup(row as never);
  }

  find(id: string): Promise<BackupRow | null> {
    return this.prisma.backup.findUnique({ where: { id } }).then((row) => (row ? toBackup(row as never) : null));
  }

  /** Succeeded base backups, newest first. */
  async bases(): Promise<BackupRow[]> {
    const rows = await this.prisma.backup.findMany({ where: { kind: 'base', status: 'succeeded' }, orderBy: { finishedAt: 'desc' } });
    return rows.map((row) => toBackup(row as never));
  }

  /** The newest base backup that finished at or before `at` (a point-in-time restore starts from it). */
  async baseBefore(at: Date): Promise<BackupRow | null> {
    const row = await this.prisma.backup.findFirst({ where: { kind: 'base', status: 'succeeded', finishedAt: { lte: at } }, orderBy: { finishedAt: 'desc' } });
    return row ? toBackup(row as never) : null;
  }

  /** What an application's owner may restore to: the server's base backups and the application's own restore points, newest first. */
  async forApplication(applicationId: ApplicationId, limit = 100): Promise<BackupRow[]> {
    const rows = await this.prisma.backup.findMany({
      where: { OR: [{ kind: 'base' }, { kind: 'restore_point', applicationId }] },
      orderBy: { startedAt: 'desc' },
      take: limit,
    });
    return rows.map((row) => toBackup(row as never));
  }

  /** Every backup and restore point, newest first (the operator's view). */
  async all(limit = 200): Promise<BackupRow[]> {
    const rows = await this.prisma.backup.findMany({ orderBy: { startedAt: 'desc' }, take: limit });
    return rows.map((row) => toBackup(row as never));
  }

  /** The latest base backup attempt, and the latest failure if it came after the latest success (the dashboard's banner). */
  async health(): Promise<{ lastSuccess: BackupRow | null; failure: BackupRow | null }> {
    const [success, failure] = await Promise.all([
      this.prisma.backup.findFirst({ where: { kind: 'base', status: 'succeeded' }, orderBy: { finishedAt: 'desc' } }),
      this.prisma.backup.findFirst({ where: { kind: 'base', status: 'failed' }, orderBy: { startedAt: 'desc' } }),
    ]);
    const lastFailure = failure && (!success || failure.startedAt > success.startedAt) ? toBackup(failure as never) : null;
    return { lastSuccess: success ? toBackup(success as never) : null, failure: lastFailure };
  }

  async addWal(name: string, sizeBytes: number): Promise<void> {
    // One statement: two shippers (the launcher's and an operator's `slipway admin backup`) may catalogue the same file at once.
    await this.platform.pool.query(
      `INSERT INTO backup_wal (name, size_bytes) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET size_bytes = EXCLUDED.size_bytes`,
      [name, sizeBytes],
    );
  }

  /** Archived WAL files from `first` on (segments and timeline history files), in name order. */
  async walFrom(first: string): Promise<{ name: string; sizeBytes: number }[]> {
    const rows = await this.prisma.backupWal.findMany({
      where: { OR: [{ name: { gte: first } }, { name: { endsWith: '.history' } }] },
      orderBy: { name: 'asc' },
    });
    return rows.map((row) => ({ name: row.name, sizeBytes: Number(row.sizeBytes) }));
  }

  async walBytes(): Promise<number> {
    const sum = await this.prisma.backupWal.aggregate({ _sum: { sizeBytes: true } });
    return Number(sum._sum.sizeBytes ?? 0n);
  }

  /**
   * Retention: base backups that finished before `cutoff` go (the newest one always stays), with
   * the WAL only they needed and restore points older than the oldest base kept. Answers the blob
   * keys to delete (the caller deletes them after the rows).
   */
  async prune(cutoff: Date): Promise<{ blobKeys: string[]; walNames: string[] }> {
    const bases = await this.bases();
    const keep = bases.filter((base, index) => index === 0 || (base.finishedAt ?? base.startedAt) >= cutoff);
    const drop = bases.filter((base) => !keep.includes(base));
    const oldest = keep.at(-1);
    const walNames = oldest?.walStart
      ? (
          await this.prisma.backupWal.findMany({ where: { name: { lt: oldest.walStart }, NOT: { name: { endsWith: '.history' } } }, select: { name: true } })
        ).map((row) => row.name)
      : [];
    await this.prisma.$transaction([
      this.prisma.backup.deleteMany({ where: { id: { in: drop.map((base) => base.id) } } }),
      this.prisma.backup.deleteMany({ where: { status: 'failed', startedAt: { lt: cutoff } } }),
      ...(oldest ? [this.prisma.backup.deleteMany({ where: { kind: 'restore_point', startedAt: { lt: oldest.finishedAt ?? oldest.startedAt } } })] : []),
      this.prisma.backupWal.deleteMany({ where: { name: { in: walNames } } }),
    ]);
    return { blobKeys: drop.flatMap((base) => (base.blobKey ? [base.blobKey] : [])), walNames };
  }

  /** After a whole-platform restore: the catalogue of the home it came from does not describe this one's store. */
  async forgetAll(): Promise<void> {
    await this.prisma.$transaction([this.prisma.backup.deleteMany({}), this.prisma.backupWal.deleteMany({})]);
  }

  async createRestore(applicationId: ApplicationId, targetTime: Date, mode: 'in_place' | 'new'): Promise<RestoreRow> {
    try {
      const row = await this.prisma.databaseRestore.create({ data: { applicationId, targetTime, mode, status: 'queued', step: 'queued' } });
      return toRestore(row as never);
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
        throw new RestoreInProgressError('a restore of this database is already queued or running');
      throw error;
    }
  }

  /** Takes the oldest queued restore (one process at a time gets each). */
  async claimRestore(): Promise<RestoreRow | null> {
    const rows = await this.platform.pool.query(
      `UPDATE database_restores SET status = 'running', started_at = now(), step = 'starting'
        WHERE id = (SELECT id FROM database_restores WHERE status = 'queued' ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
        RETURNING id`,
    );
    const id = rows.rows[0]?.id as string | undefined;
    return id ? this.findRestore(id) : null;
  }

  async findRestore(id: string, applicationId?: ApplicationId): Promise<RestoreRow | null> {
    const row = await this.prisma.databaseRestore.findFirst({ where: { id, ...(applicationId ? { applicationId } : {}) } });
    return row ? toRestore(row as never) : null;
  }

  async restores(applicationId: ApplicationId, limit = 20): Promise<RestoreRow[]> {
    const rows = await this.prisma.databaseRestore.findMany({ where: { applicationId }, orderBy: { createdAt: 'desc' }, take: limit });
    return rows.map((row) => toRestore(row as never));
  }

  /** Restores asked for this application since `since`, and when the oldest of them was (a rate limit's window). */
  async restoresSince(applicationId: ApplicationId, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const rows = await this.prisma.databaseRestore.findMany({
      where: { applicationId, createdAt: { gte: since } },
      select: { createdAt: true },
      orderBy: { createdAt: 'asc' },
    });
    return { count: rows.length, oldest: rows[0]?.createdAt ?? null };
  }

  /** Restore points this application's owner marked since `since`. */
  async pointsSince(applicationId: ApplicationId, since: Date): Promise<number> {
    return this.prisma.backup.count({ where: { applicationId, kind: 'restore_point', startedAt: { gte: since } } });
  }

  async restoreStep(id: string, step: string): Promise<void> {
    await this.prisma.databaseRestore.update({ where: { id }, data: { step } });
  }

  async finishRestore(id: string, done: { databaseName: string; keptDatabase: string | null; sizeBytes: number }): Promise<void> {
    await this.prisma.databaseRestore.update({
      where: { id },
      data: {
        status: 'succeeded',
        step: 'done',
        databaseName: done.databaseName,
        keptDatabase: done.keptDatabase,
        sizeBytes: BigInt(done.sizeBytes),
        finishedAt: new Date(),
      },
    });
  }

  async failRestore(id: string, error: string): Promise<void> {
    await this.prisma.databaseRestore.update({ where: { id }, data: { status: 'failed', error: error.slice(0, 2000), finishedAt: new Date() } });
  }

  /** Restores a killed process left `running`: failed (a restore never half-applies; see the backup service). */
  async failInterruptedRestores(): Promise<number> {
    const { count } = await this.prisma.databaseRestore.updateMany({
      where: { status: 'running' },
      data: { status: 'failed', error: 'interrupted (the backup service stopped while it ran); nothing was replaced', finishedAt: new Date() },
    });
    return count;
  }
}
