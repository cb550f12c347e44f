import { Inject, Injectable } from '@nestjs/common';
import { formatBytes } from '@slipway/contract';
import { DeploymentsRepository, type ApplicationId, type OwnerStorage } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/**
 * The owner's storage quota (LIMITS.storagePerPlan, `STORAGE_QUOTAS`) on the deploy path: an owner
 * already at its quota (not counting the releases this deploy will prune) is refused before a
 * byte of the body is read; a source that would take it
 * over is refused once its compressed size is known (and not kept). Concurrent deploys of one
 * owner's applications are each judged against what is stored, so they may overshoot by what
 * they upload at once (at most `UPLOADS_PER_APPLICATION` per application); the build worker
 * judges the artifact again against the stored bytes of that moment.
 */
@Injectable()
export class StorageQuota {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deployments: DeploymentsRepository,
  ) {}

  /** Before the upload: refused when the owner already stores its whole quota. */
  async assertRoomLeft(applicationId: ApplicationId): Promise<void> {
    await this.assertFits(applicationId, 0);
  }

  /** After the upload: refused when this source (compressed, as stored) would take the owner over its quota. */
  async assertSourceFits(applicationId: ApplicationId, sourceBytes: number): Promise<void> {
    await this.assertFits(applicationId, sourceBytes);
  }

  /**
   * Judged as the build worker judges the release: against what the owner stores minus the
   * releases this deploy's success will prune, so an owner at its quota can still replace its
   * oldest release by a new one.
   */
  private async assertFits(applicationId: ApplicationId, adding: number): Promise<void> {
    const [usage, pruned] = await Promise.all([
      this.deployments.storage.ofOwnerOf(applicationId),
      this.deployments.storage.prunedAfterNextRelease(applicationId, this.config.RELEASES_KEPT),
    ]);
    if (!usage) throw new ApiException('not_found', 'This application no longer exists.');
    const quota = this.config.STORAGE_QUOTAS[usage.plan];
    const used = usage.sourcesBytes + usage.artifactsBytes;
    const kept = used - pruned;
    // No quota known for the plan: refused, never stored without one (fail closed).
    if (quota === undefined || (adding === 0 ? kept >= quota : kept + adding > quota)) throw quotaExceeded(usage, used, kept, adding, quota ?? 0);
  }
}

function quotaExceeded(usage: OwnerStorage, used: number, kept: number, adding: number, quota: number): ApiException {
  const what =
    adding > 0
      ? `This source (${formatBytes(adding)} compressed) would take your applications' storage to ${formatBytes(kept + adding)}`
      : `Your applications already store ${formatBytes(used)}`;
  return new ApiException(
    'storage_quota_exceeded',
    `${what}, over the ${usage.plan} plan's storage quota of ${formatBytes(quota)} (${formatBytes(usage.artifactsBytes)} in kept releases, ${formatBytes(usage.sourcesBytes)} in sources of deployments in progress). Older releases are removed as new ones succeed; the dashboard shows what each application stores.`,
    { usedBytes: used, quotaBytes: quota, ...(adding > 0 ? { sourceBytes: adding } : {}) },
    adding === 0 ? { Connection: 'close' } : {},
  );
}
