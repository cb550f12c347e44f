import { Inject, Injectable } from '@nestjs/common';
import { LIMITS, type BackupView, type DatabaseBackupsView, type RestoreView } from '@slipway/contract';
import { ApplicationsRepository, BackupsRepository, RestoreInProgressError, asApplicationId, type BackupRow, type RestoreRow } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { z } from 'zod';
import { parseBody } from '../common/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import type { OwnedApplication, OwnerPrincipal } from '../owners/index.js';

const RestoreBody = z.strictObject({
  to: z.string().min(1).max(64),
  into: z.enum(['new', 'in_place']),
});
const RESTORE_HINT = 'Send {"to": "<ISO time or backup id>", "into": "new" | "in_place"}.';
const PointBody = z.strictObject({ label: z.string().trim().min(1).max(100).optional() });

const backupView = (row: BackupRow): BackupView => ({
  id: row.id,
  kind: row.kind,
  label: row.label,
  at: (row.finishedAt ?? row.startedAt).toISOString(),
  sizeBytes: row.kind === 'base' ? row.sizeBytes : null,
  trigger: row.trigger,
});

export const restoreView = (row: RestoreRow): RestoreView => ({
  id: row.id,
  status: row.status,
  step: row.step,
  to: row.targetTime.toISOString(),
  into: row.mode,
  databaseName: row.databaseName,
  keptDatabase: row.keptDatabase,
  sizeBytes: row.sizeBytes,
  error: row.error,
  createdAt: row.createdAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
});

/**
 * An application's database backups in the owners' API: what it can be restored to (any time in
 * the plan's window since the earliest base backup, the base backups and its restore points), a
 * restore point on demand, and restores (queued here, run by the launcher's backup service).
 */
@Injectable()
export class DatabaseBackupsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly backups: BackupsRepository,
    private readonly applications: ApplicationsRepository,
  ) {}

  async list(owner: OwnerPrincipal, app: OwnedApplication): Promise<DatabaseBackupsView> {
    await this.database(app);
    const id = asApplicationId(app.id);
    const [rows, restores, health] = await Promise.all([this.backups.forApplication(id), this.backups.restores(id), this.backups.health()]);
    const window = this.window(owner, rows);
    return {
      pointInTime: window,
      windowDays: this.config.RESTORE_WINDOW_DAYS[owner.plan],
      backups: rows.filter((row) => row.status === 'succeeded').map(backupView),
      restores: restores.map(restoreView),
      // The platform's own state: when its last base backup finished, and whether a later one failed (details are the operator's).
      health: { lastBackupAt: health.lastSuccess?.finishedAt?.toISOString() ?? null, failedAt: health.failure?.startedAt.toISOString() ?? null },
    };
  }

  /** A named point to restore to later (`pg_create_restore_point`), e.g. before a risky migration. */
  async mark(app: OwnedApplication, body: unknown): Promise<BackupView> {
    await this.database(app);
    const { label } = parseBody(PointBody, body, 'Send {"label": "<text>"} or {}.');
    if ((await this.backups.pointsSince(asApplicationId(app.id), new Date(Date.now() - 3600_000))) >= LIMITS.restorePointsPerHour) {
      throw new ApiException(
        'rate_limited',
        `At most ${LIMITS.restorePointsPerHour} restore points an hour per application; any moment of the window can be restored to without one.`,
        { retryAfterSeconds: 600 },
        { 'retry-after': '600' },
      );
    }
    const point = await this.backups.markRestorePoint(asApplicationId(app.id), label ?? 'restore point');
    return backupView(point);
  }

  async restore(owner: OwnerPrincipal, app: OwnedApplication, body: unknown): Promise<RestoreView> {
    await this.database(app);
    const { to, into } = parseBody(RestoreBody, body, RESTORE_HINT);
    const id = asApplicationId(app.id);
    const recent = await this.backups.restoresSince(id, new Date(Date.now() - 3600_000));
    if (recent.count >= LIMITS.restoresPerHour) {
      const retryAfterSeconds = Math.max(1, Math.ceil((recent.oldest!.getTime() + 3600_000 - Date.now()) / 1000));
      throw new ApiException(
        'rate_limited',
        `At most ${LIMITS.restoresPerHour} restores an hour per application (each replays the whole server); try again in ${Math.ceil(retryAfterSeconds / 60)} min.`,
        { retryAfterSeconds },
        { 'retry-after': String(retryAfterSeconds) },
      );
    }
    const rows = await this.backups.forApplication(id);
    let target: Date;
    // A backup of the server, or a restore point of this application (any age; another application's is not found).
    const named = /^[0-9a-f-]{36}$/.test(to) ? await this.backups.find(to) : null;
    if (named && named.status === 'succeeded' && (named.kind === 'base' || named.applicationId === app.id)) target = named.finishedAt ?? named.startedAt;
    // A time with its zone (Z or ±hh:mm): never the server's local time by accident.
    else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(to) && !Number.isNaN(Date.parse(to))) target = new Date(to);
    else
      throw new ApiException(
        'bad_request',
        `to: ${JSON.stringify(to)} is neither a time with its zone (ISO 8601, e.g. 2026-11-28T09:30:00Z) nor one of this application's backups. ${RESTORE_HINT}`,
      );
    const window = this.window(owner, rows);
    if (!window)
      throw new ApiException(
        'restore_point_unavailable',
        'There is no backup to restore from yet: the first base backup is taken when the platform starts; try again in a minute.',
        { earliest: null, latest: null },
      );
    if (target.getTime() > Date.now()) throw new ApiException('restore_point_unavailable', `${target.toISOString()} is in the future.`, window);
    if (target < new Date(window.earliest)) {
      throw new ApiException(
        'restore_point_unavailable',
        `${target.toISOString()} is before the earliest point this database can be restored to (${window.earliest}: the plan's ${this.config.RESTORE_WINDOW_DAYS[owner.plan]}-day window, or the oldest backup kept).`,
        window,
      );
    }
    try {
      return restoreView(await this.backups.createRestore(id, target, into));
    } catch (error) {
      if (error instanceof RestoreInProgressError) {
        const active = (await this.backups.restores(id, 5)).find((row) => row.status === 'queued' || row.status === 'running');
        throw new ApiException('restore_in_progress', 'A restore of this database is already queued or running; wait for it to finish.', {
          restoreId: active?.id ?? null,
        });
      }
      throw error;
    }
  }

  async restoreStatus(app: OwnedApplication, restoreId: string): Promise<RestoreView> {
    const row = /^[0-9a-f-]{36}$/.test(restoreId) ? await this.backups.findRestore(restoreId, asApplicationId(app.id)) : null;
    if (!row) throw new ApiException('not_found', 'No such restore of this application.');
    return restoreView(row);
  }

  /** From the later of the earliest base backup and the plan's window, to now. */
  private window(owner: OwnerPrincipal, rows: BackupRow[]): { earliest: string; latest: string } | null {
    const bases = rows.filter((row) => row.kind === 'base' && row.status === 'succeeded' && row.finishedAt);
    if (!bases.length) return null;
    const oldest = Math.min(...bases.map((row) => row.finishedAt!.getTime()));
    const planFloor = Date.now() - this.config.RESTORE_WINDOW_DAYS[owner.plan] * 86400_000;
    return { earliest: new Date(Math.max(oldest, planFloor)).toISOString(), latest: new Date().toISOString() };
  }

  private async database(app: OwnedApplication) {
    const row = await this.applications.databases.find(asApplicationId(app.id));
    if (!row) throw new ApiException('not_found', 'This application has no database yet; switching sign-in on creates one.');
    return row;
  }
}
