import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { DeploymentsRepository } from '@slipway/platform-data';
import { PeriodicTask } from '@slipway/service-kit';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { BLOBS } from '../tokens.js';

export interface JanitorReport {
  endedSources: number;
  orphanSources: number;
  orphanArtifacts: number;
}

/** Ended deployments' sources deleted per run (the rest wait for the next run). */
const ENDED_BATCH = 500;

/**
 * Finds what the storage lifecycle (storage-lifecycle.ts) could not finish, and deletes it:
 * - sources of deployments that ended without their worker deleting them (failed by the
 *   reconciler at their deadline, a worker killed between the commit and the delete, rows from
 *   before sources were deleted);
 * - blobs no row names, older than `STORAGE_ORPHAN_GRACE_MINUTES` (so never a source whose row
 *   the gateway is about to insert, nor an artifact its release step is about to record): a
 *   gateway killed between the blob and the row, a worker killed between packing and recording,
 *   a prune killed between its rows and their blobs.
 * Runs on every worker at `STORAGE_JANITOR_INTERVAL_MS`; every deletion is idempotent, so runs
 * that overlap (several workers) are harmless.
 */
@Injectable()
export class StorageJanitorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('storage');
  private readonly task = new PeriodicTask(
    () => this.sweep(),
    (error) => this.logger.error(`storage sweep failed: ${error.message}`),
  );

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly deployments: DeploymentsRepository,
    @Inject(BLOBS) private readonly blobs: BlobStore,
  ) {}

  onApplicationBootstrap(): void {
    // Once soon after start too: a platform that was down for a while catches up at once.
    this.task.start(this.config.STORAGE_JANITOR_INTERVAL_MS, 5_000);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  async sweep(now = Date.now()): Promise<JanitorReport> {
    const report: JanitorReport = { endedSources: 0, orphanSources: 0, orphanArtifacts: 0 };
    for (const ended of await this.deployments.storage.endedSources(ENDED_BATCH)) {
      await this.blobs.delete(ended.sourceKey);
      await this.deployments.storage.forgetEndedSource(ended.applicationId, ended.deploymentId);
      report.endedSources += 1;
    }
    const graceMs = this.config.STORAGE_ORPHAN_GRACE_MINUTES * 60_000;
    report.orphanSources = await this.deleteOrphans('sources/', () => this.deployments.storage.sourceKeys(), now - graceMs);
    report.orphanArtifacts = await this.deleteOrphans('releases/', () => this.deployments.releases.artifactKeys(), now - graceMs);
    if (report.endedSources + report.orphanSources + report.orphanArtifacts > 0) {
      this.logger.log(
        `storage sweep: ${report.endedSources} ended deployments' sources, ${report.orphanSources} orphan sources, ${report.orphanArtifacts} orphan artifacts deleted`,
      );
    }
    return report;
  }

  /** Blobs under `prefix` no row names and last written before `olderThan`. */
  private async deleteOrphans(prefix: string, named: () => Promise<Set<string>>, olderThan: number): Promise<number> {
    // Listed before the rows are read: a blob whose row appears in between is seen as named.
    const keys = await this.blobs.list(prefix);
    if (keys.length === 0) return 0;
    const known = await named();
    let deleted = 0;
    for (const key of keys) {
      if (known.has(key)) continue;
      const stat = await this.blobs.stat(key);
      if (!stat || stat.modifiedAt.getTime() > olderThan) continue;
      await this.blobs.delete(key);
      deleted += 1;
    }
    return deleted;
  }
}
