import type { DeployStep } from '@slipway/contract';
import { Prisma } from '@slipway/platform-schema';
import type { ApplicationId, DeploymentId, ReleaseId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { asJson } from './json.js';

export interface NewRelease {
  id: ReleaseId;
  kind: string;
  artifactKey: string;
  /** Size of the artifact blob, counted against the owner's storage quota. */
  artifactBytes: number;
  spec: unknown;
}

/** A release row removed by `prune` or `removeFailed`: its artifact blob is the caller's to delete. */
export interface RemovedRelease {
  id: ReleaseId;
  artifactKey: string;
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
      await tx.release.create({
        data: {
          id: release.id,
          applicationId,
          deploymentId,
          kind: release.kind,
          artifactKey: release.artifactKey,
          artifactBytes: BigInt(release.artifactBytes),
          spec: asJson(release.spec),
        },
      });
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
      await tx.deployment.update({
        where: { id: deploymentId },
        data: { status: 'succeeded', finishedAt: new Date(), steps: asJson(steps), error: Prisma.DbNull },
      });
      return true;
    });
  }

  /**
   * Rollback (or roll forward): an existing release of the application becomes live again.
   * False when the application has no such release (another application's included, or one
   * pruned). The application row is locked first, as `prune` locks it: a release is either
   * pruned before (no such release) or made live before (then never pruned).
   */
  async switchLive(applicationId: ApplicationId, releaseId: ReleaseId): Promise<boolean> {
    return this.platform.prisma.$transaction(async (tx) => {
      const app = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM applications WHERE id = ${applicationId}::uuid FOR UPDATE`;
      if (app.length === 0) return false;
      const count = await tx.$executeRaw`
      UPDATE applications SET live_release_id = ${releaseId}::uuid, updated_at = now()
      WHERE id = ${applicationId}::uuid AND EXISTS (SELECT 1 FROM releases WHERE id = ${releaseId}::uuid AND application_id = ${applicationId}::uuid)`;
      return count > 0;
    });
  }

  /**
   * Removes the application's releases beyond the `keep` newest of succeeded deployments: never
   * the live one (a rollback target made live stays), never one of a deployment still in progress
   * (its worker is about to release it). Releases of failed deployments that are not live go too.
   * Under the application row's lock (as `switchLive`), so a concurrent rollback and prune never
   * leave a live release pruned; several workers pruning at once remove each row once. The rows
   * are gone when this returns; their artifact blobs are the caller's to delete (idempotent).
   */
  async prune(applicationId: ApplicationId, keep: number): Promise<RemovedRelease[]> {
    return this.platform.prisma.$transaction(async (tx) => {
      const app = await tx.$queryRaw<
        { live_release_id: string | null }[]
      >`SELECT live_release_id FROM applications WHERE id = ${applicationId}::uuid FOR UPDATE`;
      if (app.length === 0) return [];
      const rows = await tx.$queryRaw<{ id: string; artifact_key: string }[]>`
        DELETE FROM releases r
        WHERE r.application_id = ${applicationId}::uuid
          AND r.id IS DISTINCT FROM ${app[0]!.live_release_id}::uuid
          AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.id = r.deployment_id AND d.status IN ('queued', 'building', 'releasing'))
          AND r.id NOT IN (
            SELECT k.id FROM releases k JOIN deployments d ON d.id = k.deployment_id
            WHERE k.application_id = ${applicationId}::uuid AND d.status = 'succeeded'
            ORDER BY k.created_at DESC, k.id DESC LIMIT ${keep})
        RETURNING r.id, r.artifact_key`;
      return rows.map((r) => ({ id: r.id as ReleaseId, artifactKey: r.artifact_key }));
    });
  }

  /**
   * The owner deletes a release it no longer wants (to make room under its storage quota): never
   * the live one, never one of a deployment in progress. Under the application's lock, as
   * `switchLive`. 'removed' with the artifact key (the caller deletes the blob), or why not.
   */
  async remove(
    applicationId: ApplicationId,
    releaseId: ReleaseId,
  ): Promise<{ outcome: 'removed'; artifactKey: string } | { outcome: 'not_found' | 'live' | 'in_progress' }> {
    return this.platform.prisma.$transaction(async (tx) => {
      const app = await tx.$queryRaw<
        { live_release_id: string | null }[]
      >`SELECT live_release_id FROM applications WHERE id = ${applicationId}::uuid FOR UPDATE`;
      if (app.length === 0) return { outcome: 'not_found' as const };
      if (app[0]!.live_release_id === releaseId) return { outcome: 'live' as const };
      const rows = await tx.$queryRaw<{ artifact_key: string; active: boolean }[]>`
        SELECT r.artifact_key, d.status IN ('queued', 'building', 'releasing') AS active FROM releases r JOIN deployments d ON d.id = r.deployment_id
        WHERE r.id = ${releaseId}::uuid AND r.application_id = ${applicationId}::uuid`;
      const row = rows[0];
      if (!row) return { outcome: 'not_found' as const };
      if (row.active) return { outcome: 'in_progress' as const };
      await tx.$executeRaw`DELETE FROM releases WHERE id = ${releaseId}::uuid AND application_id = ${applicationId}::uuid`;
      return { outcome: 'removed' as const, artifactKey: row.artifact_key };
    });
  }

  /** A failed deployment's release row (never the live one): removed, its artifact the caller's to delete. */
  async removeFailed(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<RemovedRelease[]> {
    const rows = await this.platform.prisma.$queryRaw<{ id: string; artifact_key: string }[]>`
      DELETE FROM releases r
      WHERE r.application_id = ${applicationId}::uuid AND r.deployment_id = ${deploymentId}::uuid
        AND EXISTS (SELECT 1 FROM deployments d WHERE d.id = r.deployment_id AND d.status = 'failed')
        AND NOT EXISTS (SELECT 1 FROM applications a WHERE a.live_release_id = r.id)
      RETURNING r.id, r.artifact_key`;
    return rows.map((r) => ({ id: r.id as ReleaseId, artifactKey: r.artifact_key }));
  }

  /** Which of these release ids still exist (the edges remove the unpacked trees of the others). */
  async existing(releaseIds: string[]): Promise<Set<string>> {
    const ids = releaseIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id));
    if (ids.length === 0) return new Set();
    const rows = await this.platform.prisma.$queryRaw<{ id: string }[]>`SELECT id::text FROM releases WHERE id = ANY(${ids}::uuid[])`;
    return new Set(rows.map((r) => r.id));
  }

  /** Which of `releaseIds` are releases of the application (the edge's logs reader: whose logs its owner may read). */
  async ofApplication(applicationId: string, releaseIds: string[]): Promise<string[]> {
    const ids = releaseIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id));
    if (ids.length === 0 || !/^[0-9a-f-]{36}$/i.test(applicationId)) return [];
    const rows = await this.platform.prisma.$queryRaw<
      { id: string }[]
    >`SELECT id::text FROM releases WHERE application_id = ${applicationId}::uuid AND id = ANY(${ids}::uuid[])`;
    return rows.map((r) => r.id);
  }

  /** The artifact keys release rows name: all of them, or those of `among` (the janitor deletes artifact blobs no row names). */
  async artifactKeys(among?: string[]): Promise<Set<string>> {
    const rows = among
      ? await this.platform.prisma.$queryRaw<{ artifact_key: string }[]>`SELECT artifact_key FROM releases WHERE artifact_key = ANY(${among}::text[])`
      : await this.platform.prisma.$queryRaw<{ artifact_key: string }[]>`SELECT artifact_key FROM releases`;
    return new Set(rows.map((r) => r.artifact_key));
  }

  /** The latest releases of the application, newest first, each saying whether it is the live one. */
  /**
   * The newest releases of the application (`previews`: and of its previews; `preview` names the
   * preview that built one, null for production's own); `live`: the release the application's
   * address serves.
   */
  async list(applicationId: ApplicationId, options: { previews?: boolean } = {}) {
    const [app, rows] = await Promise.all([
      this.platform.prisma.application.findUnique({ where: { id: applicationId }, select: { liveReleaseId: true } }),
      this.platform.prisma.release.findMany({
        where: options.previews ? { OR: [{ applicationId }, { application: { parentId: applicationId } }] } : { applicationId },
        orderBy: { createdAt: 'desc' },
        take: PAGE,
        select: {
          id: true,
          deploymentId: true,
          kind: true,
          createdAt: true,
          artifactBytes: true,
          deployment: { select: { status: true } },
          application: { select: { previewName: true } },
        },
      }),
    ]);
    return rows.map(({ artifactBytes, deployment, application, ...r }) => ({
      ...r,
      sizeBytes: Number(artifactBytes),
      deploymentStatus: deployment.status,
      live: r.id === app?.liveReleaseId,
      preview: application.previewName,
    }));
  }

  /**
   * Hazards found after the release's deploy finished (the edge's watch of its first minute live),
   * put on the deployment that made it: its status stays as it is. Hazards of the same codes
   * already there are replaced (a release watched again, by a second edge or a later switch, is
   * not reported twice). False: no such release of this application.
   */
  async addLateHazards(applicationId: ApplicationId, releaseId: ReleaseId, hazards: { code: string; [field: string]: unknown }[]): Promise<boolean> {
    const codes = [...new Set(hazards.map((h) => h.code))];
    const changed = await this.platform.prisma.$executeRaw`
      UPDATE deployments d SET hazards = (
          SELECT coalesce(jsonb_agg(h ORDER BY n), '[]'::jsonb) FROM jsonb_array_elements(d.hazards) WITH ORDINALITY AS e(h, n)
           WHERE NOT (h->>'code' = ANY(${codes}::text[]))
        ) || ${JSON.stringify(hazards)}::jsonb
        FROM releases r
       WHERE r.id = ${releaseId}::uuid AND r.application_id = ${applicationId}::uuid AND d.id = r.deployment_id AND d.application_id = ${applicationId}::uuid`;
    return changed > 0;
  }
}
