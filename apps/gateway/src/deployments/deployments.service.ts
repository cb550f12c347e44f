import { Inject, Injectable } from '@nestjs/common';
import type { ApplicationStorageView, DeploymentRow, ReleaseSwitchView, ReleaseView, ServerView } from '@slipway/contract';
import type { BlobStore } from '@slipway/blob';
import { DeploymentsRepository, asApplicationId, asDeploymentId, asReleaseId } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { BLOB_STORE, isUuid } from '../common/index.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { type DeploymentTask, TaskId } from '../contract/index.js';
import { ReleaseGoLiveService } from './release-go-live.service.js';

const IN_PROGRESS = new Set(['queued', 'building', 'releasing']);

/**
 * Deployments and releases of one application: the API's poll and the dashboard's lists,
 * rollback and poll (one deployment is exactly what the API's poll answers).
 */
@Injectable()
export class DeploymentsService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deployments: DeploymentsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly goLive: ReleaseGoLiveService,
  ) {}

  async list(applicationId: string): Promise<{ deployments: ServerView<DeploymentRow>[] }> {
    const rows = await this.deployments.list(asApplicationId(applicationId));
    return {
      deployments: rows.map(({ warnings, hazards, ...row }) => ({ ...row, warningCount: countOf(warnings), hazardCount: countOf(hazards) })),
    };
  }

  async releases(applicationId: string): Promise<{ releases: ServerView<ReleaseView>[] }> {
    return { releases: await this.deployments.releases.list(asApplicationId(applicationId), { previews: true }) };
  }

  /** What the application stores in blob storage, and its owner's usage against the plan's quota. */
  async storage(applicationId: string): Promise<ApplicationStorageView> {
    const id = asApplicationId(applicationId);
    const [app, owner] = await Promise.all([this.deployments.storage.ofApplication(id), this.deployments.storage.ofOwnerOf(id)]);
    if (!owner) throw new ApiException('not_found', 'This application no longer exists.');
    return {
      sources: app.sources,
      releases: { ...app.releases, kept: this.config.RELEASES_KEPT },
      caches: { bytes: null },
      owner: { plan: owner.plan, usedBytes: owner.sourcesBytes + owner.artifactsBytes, quotaBytes: this.config.STORAGE_QUOTAS[owner.plan] ?? 0 },
    };
  }

  /** The owner deletes a release that is not live (its artifact goes; each edge removes its unpacked copy). */
  async removeRelease(applicationId: string, releaseId: string) {
    const result = isUuid(releaseId)
      ? await this.deployments.releases.remove(asApplicationId(applicationId), asReleaseId(releaseId))
      : { outcome: 'not_found' as const };
    switch (result.outcome) {
      case 'not_found':
        throw new ApiException('not_found', 'This application has no such release.');
      case 'live':
        throw new ApiException('bad_request', 'This release is live: make another release live before deleting it.');
      case 'in_progress':
        throw new ApiException('bad_request', 'This release belongs to a deployment still in progress.');
      case 'removed':
        await this.blobs.delete(result.artifactKey);
    }
    return this.releases(applicationId);
  }

  /**
   * Promote (or the dashboard's rollback button): a kept release of this application becomes
   * live, without a rebuild. Health-gated exactly as a deploy's release step: the edge starts it
   * and reports it healthy, is asked to serve it, and only then is it committed as live and every
   * edge told — the address never routes to a release that has not started and passed its check.
   * Refused, with the live release still serving: a release that does not become healthy
   * (`release_unhealthy`), one whose deployment is still in progress, an edge that does not answer.
   */
  async makeLive(applicationId: string, releaseId: string): Promise<ServerView<ReleaseSwitchView>> {
    const releases = await this.deployments.releases.list(asApplicationId(applicationId), { previews: true });
    const target = isUuid(releaseId) ? releases.find((r) => r.id === releaseId) : undefined;
    if (!target) throw new ApiException('not_found', 'This application has no such release.');
    if (target.preview !== null) {
      throw new ApiException(
        'bad_request',
        `This release is preview ${target.preview}'s: it was built with the preview's secrets. Deploy the same folder without --preview to make it production.`,
      );
    }
    if (IN_PROGRESS.has(target.deploymentStatus))
      throw new ApiException('bad_request', 'This release belongs to a deployment still in progress; it goes live when that deployment succeeds.');
    const previous = releases.find((r) => r.live)?.id ?? null;
    if (previous !== target.id) {
      await this.goLive.makeLive(applicationId, target.id);
    }
    return { liveReleaseId: target.id, previousReleaseId: previous, releases: (await this.releases(applicationId)).releases };
  }

  /**
   * Rollback: `releaseId`, or by default the newest release of a succeeded deployment older than
   * the live one, becomes live (as `makeLive`).
   */
  async rollback(applicationId: string, releaseId?: string): Promise<ServerView<ReleaseSwitchView>> {
    if (releaseId !== undefined) return this.makeLive(applicationId, releaseId);
    // Production's own releases only: a preview's is never a rollback target.
    const releases = await this.deployments.releases.list(asApplicationId(applicationId));
    const liveAt = releases.findIndex((r) => r.live);
    const earlier = releases.slice(liveAt + 1).find((r) => r.deploymentStatus === 'succeeded');
    if (!earlier)
      throw new ApiException(
        'not_found',
        liveAt < 0
          ? 'This application has no live release to roll back from.'
          : 'There is no earlier release of a succeeded deployment to roll back to (older ones may have been pruned).',
      );
    return this.makeLive(applicationId, earlier.id);
  }

  /**
   * The task as its application sees it; another application's task does not exist. `previews`
   * (the owners' API): a task of one of its previews too (the contract's poll sees its own only).
   */
  async poll(applicationId: string, taskId: string, options: { previews?: boolean } = {}): Promise<DeploymentTask> {
    const id = TaskId.safeParse(taskId.toLowerCase());
    const row = id.success ? await this.deployments.findForApplication(asApplicationId(applicationId), asDeploymentId(id.data), options) : null;
    if (!row) throw new ApiException('not_found', `No deployment task ${taskId.slice(0, 64)} for this application.`);
    const task: DeploymentTask = {
      taskId: row.id,
      status: row.status,
      steps: row.steps as DeploymentTask['steps'],
      spec: (row.spec ?? null) as DeploymentTask['spec'],
      warnings: row.warnings as DeploymentTask['warnings'],
      hazards: row.hazards as DeploymentTask['hazards'],
      createdAt: row.createdAt.toISOString(),
      startedAt: row.startedAt?.toISOString() ?? null,
      finishedAt: row.finishedAt?.toISOString() ?? null,
      queuedSeconds: queuedSeconds(row.createdAt, row.startedAt),
    };
    if (row.status === 'succeeded') task.url = `${this.config.APPS_SCHEME}://${row.application.slug}.${this.config.APPS_DOMAIN[0]}`;
    if (row.status === 'failed') task.error = (row.error ?? { code: 'internal', message: 'The deployment failed.', step: null }) as DeploymentTask['error'];
    return task;
  }
}

/** Time in the build queue, to the tenth of a second: until the build started, or until now while queued. */
function queuedSeconds(createdAt: Date, startedAt: Date | null): number {
  const until = startedAt ?? new Date();
  return Math.max(0, Math.round((until.getTime() - createdAt.getTime()) / 100) / 10);
}

function countOf(entries: unknown): number {
  return Array.isArray(entries) ? entries.length : 0;
}
