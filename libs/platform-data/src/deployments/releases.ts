import type { DeployStep } from '@slipway/contract';
import { Prisma } from '@slipway/db';
import type { ApplicationId, DeploymentId, ReleaseId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { asJson } from './json.js';

export interface NewRelease {
  id: ReleaseId;
  kind: string;
  artifactKey: string;
  spec: unknown;
}

const PAGE = 50;

/**
 * Releases: stored by the worker's release step, made live by its commit or by a rollback, listed
 * by the dashboard. An application's live release is `applications.live_release_id`; the edge
 * reads it through `LiveRoutes`.
 */
export class Releases {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /**
   * Stores the release row (not live yet), only while this attempt owns the deployment in
   * `releasing`; an earlier attempt's row for this deployment is replaced unless it is live.
   */
  async create(applicationId: ApplicationId, deploymentId: DeploymentId, attempt: number, release: NewRelease): Promise<boolean> {
    return this.platform.prisma.$transaction(async (tx) => {
      const owned = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND attempts = ${attempt} AND status = 'releasing' FOR UPDATE`;
      if (owned.length === 0) return false;
      await tx.$executeRaw`
        DELETE FROM releases r WHERE r.deployment_id = ${deploymentId}::uuid AND NOT EXISTS (SELECT 1 FROM applications a WHERE a.live_release_id = r.id)`;
      await tx.release.create({ data: { id: release.id, applicationId, deploymentId, kind: release.kind, artifactKey: release.artifactKey, spec: asJson(release.spec) } });
      return true;
    });
  }

  /**
   * The worker's commit: the release live and the deployment `succeeded` in one transaction, only
   * if this attempt still owns the deployment, so two workers can never both release it.
   */
  async commitLive(applicationId: ApplicationId, deploymentId: DeploymentId, attempt: number, releaseId: ReleaseId, steps: DeployStep[]): Promise<boolean> {
    return this.platform.prisma.$transaction(async (tx) => {
      const owned = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND attempts = ${attempt} AND status = 'releasing' FOR UPDATE`;
      if (owned.length === 0) return false;
      await tx.application.update({ where: { id: applicationId }, data: { liveReleaseId: releaseId } });
      await tx.deployment.update({ where: { id: deploymentId }, data: { status: 'succeeded', finishedAt: new Date(), steps: asJson(steps), error: Prisma.DbNull } });
      return true;
    });
  }

  /**
   * Rollback (or roll forward): an existing release of the application becomes live again.
   * False when the application has no such release (another application's included).
   */
  async switchLive(applicationId: ApplicationId, releaseId: ReleaseId): Promise<boolean> {
    const count = await this.platform.prisma.$executeRaw`
    UPDATE applications SET live_release_id = ${releaseId}::uuid, updated_at = now()
    WHERE id = ${applicationId}::uuid AND EXISTS (SELECT 1 FROM releases WHERE id = ${releaseId}::uuid AND application_id = ${applicationId}::uuid)`;
    return count > 0;
  }

  /** The latest releases of the application, newest first, each saying whether it is the live one. */
  async list(applicationId: ApplicationId) {
    const [app, rows] = await Promise.all([
      this.platform.prisma.application.findUnique({ where: { id: applicationId }, select: { liveReleaseId: true } }),
      this.platform.prisma.release.findMany({ where: { applicationId }, orderBy: { createdAt: 'desc' }, take: PAGE, select: { id: true, deploymentId: true, kind: true, createdAt: true } }),
    ]);
    return rows.map((r) => ({ ...r, live: r.id === app?.liveReleaseId }));
  }
}
