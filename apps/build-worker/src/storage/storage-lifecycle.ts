import type { Logger } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { formatBytes, type StorageQuotas } from '@slipway/contract';
import type { ApplicationId, DeploymentId, DeploymentsRepository } from '@slipway/platform-data';
import { StepFailure } from '../pipeline/step-recorder.js';

export interface StorageSettings {
  releasesKept: number;
  quotas: StorageQuotas;
}

/**
 * What a deployment leaves in blob storage, and when it goes (docs/decisions/storage-lifecycle.md):
 * - its source (a compressed tar) is needed until the deployment ends: a retry after a worker
 *   crash unpacks it again. Once the row is `succeeded` or `failed` the blob is deleted, then the
 *   row forgets its key;
 * - after a successful release, the application's releases beyond the newest `releasesKept` are
 *   pruned (never the live one, never a rollback target that is live): rows first, under the
 *   application's lock, then their artifact blobs; the edges remove the unpacked trees of releases
 *   that no longer exist;
 * - a failed deployment's artifact (and its release row, unless live) goes at once.
 * Every step is idempotent and safe with several workers; anything a crash leaves behind is found
 * by the janitor (storage-janitor.service.ts). Cleanup never fails a deployment: it is logged and
 * retried by the janitor.
 */
export class StorageLifecycle {
  constructor(
    private readonly deployments: DeploymentsRepository,
    private readonly blobs: BlobStore,
    private readonly settings: StorageSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * Before a new release is stored: the owner's stored bytes after it (the release's artifact
   * added, the releases its success will prune taken away) must fit the plan's quota.
   */
  async assertArtifactFits(applicationId: ApplicationId, artifactBytes: number): Promise<void> {
    const usage = await this.deployments.storage.ofOwnerOf(applicationId);
    if (!usage) throw new Error(`application ${applicationId} has no owner`);
    const quota = this.settings.quotas[usage.plan];
    // Unknown plan: no quota to apply, so refuse rather than store without one (fail closed).
    if (quota === undefined)
      throw new StepFailure('storage_quota_exceeded', `the owner's plan "${usage.plan}" has no storage quota configured; nothing was stored`);
    const pruned = await this.deployments.storage.prunedAfterNextRelease(applicationId, this.settings.releasesKept);
    const after = usage.sourcesBytes + usage.artifactsBytes - pruned + artifactBytes;
    if (after > quota) {
      throw new StepFailure(
        'storage_quota_exceeded',
        `this release's artifact (${formatBytes(artifactBytes)}) would take the owner's storage to ${formatBytes(after)}, over the ${usage.plan} plan's quota of ${formatBytes(quota)} (now stored: ${formatBytes(usage.sourcesBytes)} of sources in progress, ${formatBytes(usage.artifactsBytes)} of kept releases)`,
      );
    }
  }

  /** The deployment ended (`succeeded` or `failed` committed): its source goes. */
  async deleteEndedSource(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<void> {
    const key = await this.deployments.storage.endedSourceKey(applicationId, deploymentId);
    if (!key) return;
    await this.blobs.delete(key);
    await this.deployments.storage.forgetEndedSource(applicationId, deploymentId);
  }

  /** After a successful release: the source goes, and the releases beyond the kept ones. */
  async afterSuccess(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<void> {
    await this.settle(`deployment ${deploymentId}`, async () => {
      await this.deleteEndedSource(applicationId, deploymentId);
      await this.pruneReleases(applicationId);
    });
  }

  /** After a failure: the source goes, and whatever the attempt packed (row and artifact, never a live one). */
  async afterFailure(applicationId: ApplicationId, deploymentId: DeploymentId, artifactKey: string | undefined): Promise<void> {
    await this.settle(`deployment ${deploymentId}`, async () => {
      await this.deleteEndedSource(applicationId, deploymentId);
      const removed = await this.deployments.releases.removeFailed(applicationId, deploymentId);
      const keys = new Set(removed.map((r) => r.artifactKey));
      // Packed but never stored as a release row (failed at release, or over the quota).
      if (artifactKey && !(await this.deployments.releases.artifactKeys([artifactKey])).size) keys.add(artifactKey);
      for (const key of keys) await this.blobs.delete(key);
    });
  }

  async pruneReleases(applicationId: ApplicationId): Promise<number> {
    const removed = await this.deployments.releases.prune(applicationId, this.settings.releasesKept);
    for (const release of removed) await this.blobs.delete(release.artifactKey);
    if (removed.length)
      this.logger.log(`application ${applicationId}: ${removed.length} old release(s) pruned (keeping ${this.settings.releasesKept} and the live one)`);
    return removed.length;
  }

  private async settle(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.warn(`${what}: storage cleanup failed (${(error as Error).message}); the janitor retries it`);
    }
  }
}
