import type { PlanName } from '@slipway/contract';
import type { ApplicationId, DeploymentId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

/** What one owner stores, counted against its plan's storage quota. */
export interface OwnerStorage {
  ownerId: string;
  plan: PlanName;
  /** Compressed sources of deployments not finished yet (deleted when they end). */
  sourcesBytes: number;
  /** Artifacts of every kept release of every application of the owner. */
  artifactsBytes: number;
}

/** What one application stores, for the dashboard. */
export interface ApplicationStorage {
  sources: { count: number; bytes: number };
  releases: { count: number; bytes: number };
}

/** A finished deployment whose source blob is still stored. */
export interface EndedSource {
  applicationId: ApplicationId;
  deploymentId: DeploymentId;
  sourceKey: string;
}

const OWNER_USAGE = `SELECT o.id::text AS owner_id, o.plan::text AS plan,
    (SELECT COALESCE(sum(d.source_bytes), 0)::float8 FROM deployments d JOIN applications x ON x.id = d.application_id
      WHERE x.owner_id = o.id AND d.source_key IS NOT NULL) AS sources,
    (SELECT COALESCE(sum(r.artifact_bytes), 0)::float8 FROM releases r JOIN applications x ON x.id = r.application_id
      WHERE x.owner_id = o.id) AS artifacts
  FROM applications a JOIN owners o ON o.id = a.owner_id WHERE a.id = $1::uuid`;

/**
 * Stored bytes: what an owner stores (the quota), what an application stores (the dashboard),
 * and the sources of finished deployments, which are deleted (the worker's lifecycle and its
 * janitor). Sizes come from the rows (`deployments.source_bytes` while `source_key` is set,
 * `releases.artifact_bytes`), so usage is a sum, never a walk of blob storage.
 */
export class StoredBytes {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /** The owner of this application and what it stores; null when the application does not exist. */
  async ofOwnerOf(applicationId: ApplicationId): Promise<OwnerStorage | null> {
    const { rows } = await this.platform.pool.query<{ owner_id: string; plan: PlanName; sources: number; artifacts: number }>({
      name: 'storage_owner_usage',
      text: OWNER_USAGE,
      values: [applicationId],
    });
    const row = rows[0];
    return row ? { ownerId: row.owner_id, plan: row.plan, sourcesBytes: Number(row.sources), artifactsBytes: Number(row.artifacts) } : null;
  }

  async ofApplication(applicationId: ApplicationId): Promise<ApplicationStorage> {
    const rows = await this.platform.prisma.$queryRaw<{ sources: number; sources_bytes: number; releases: number; releases_bytes: number }[]>`
      SELECT (SELECT count(*)::int FROM deployments WHERE application_id = ${applicationId}::uuid AND source_key IS NOT NULL) AS sources,
             (SELECT COALESCE(sum(source_bytes), 0)::float8 FROM deployments WHERE application_id = ${applicationId}::uuid AND source_key IS NOT NULL) AS sources_bytes,
             (SELECT count(*)::int FROM releases WHERE application_id = ${applicationId}::uuid) AS releases,
             (SELECT COALESCE(sum(artifact_bytes), 0)::float8 FROM releases WHERE application_id = ${applicationId}::uuid) AS releases_bytes`;
    const row = rows[0]!;
    return { sources: { count: row.sources, bytes: Number(row.sources_bytes) }, releases: { count: row.releases, bytes: Number(row.releases_bytes) } };
  }

  /**
   * Artifact bytes of the application's releases that `Releases.prune(keep)` will remove once the
   * release in progress has succeeded: the quota judges a new release against what is kept after it.
   */
  async prunedAfterNextRelease(applicationId: ApplicationId, keep: number): Promise<number> {
    const rows = await this.platform.prisma.$queryRaw<{ bytes: number }[]>`
      SELECT COALESCE(sum(r.artifact_bytes), 0)::float8 AS bytes FROM releases r
      WHERE r.application_id = ${applicationId}::uuid
        AND r.id IS DISTINCT FROM (SELECT live_release_id FROM applications WHERE id = ${applicationId}::uuid)
        AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.id = r.deployment_id AND d.status IN ('queued', 'building', 'releasing'))
        AND r.id NOT IN (
          SELECT k.id FROM releases k JOIN deployments d ON d.id = k.deployment_id
          WHERE k.application_id = ${applicationId}::uuid AND d.status = 'succeeded'
          ORDER BY k.created_at DESC, k.id DESC LIMIT ${Math.max(0, keep - 1)})`;
    return Number(rows[0]?.bytes ?? 0);
  }

  /** The source of a deployment, once it has ended: forgotten (its blob already deleted by the caller). */
  async forgetEndedSource(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<void> {
    await this.platform.prisma.$executeRaw`
      UPDATE deployments SET source_key = NULL
      WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('succeeded', 'failed')`;
  }

  /** The source key of a deployment that has ended (succeeded or failed); null while it runs or once forgotten. */
  async endedSourceKey(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<string | null> {
    const rows = await this.platform.prisma.$queryRaw<{ source_key: string | null }[]>`
      SELECT source_key FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('succeeded', 'failed')`;
    return rows[0]?.source_key ?? null;
  }

  /** Finished deployments whose source is still stored (the janitor's sweep; e.g. failed by the reconciler). */
  async endedSources(limit: number): Promise<EndedSource[]> {
    const rows = await this.platform.prisma.$queryRaw<{ id: string; application_id: string; source_key: string }[]>`
      SELECT id::text, application_id::text, source_key FROM deployments
      WHERE status IN ('succeeded', 'failed') AND source_key IS NOT NULL ORDER BY finished_at NULLS FIRST LIMIT ${limit}`;
    return rows.map((r) => ({ applicationId: r.application_id as ApplicationId, deploymentId: r.id as DeploymentId, sourceKey: r.source_key }));
  }

  /** Every source key a deployment row still names (the janitor deletes source blobs no row names). */
  async sourceKeys(): Promise<Set<string>> {
    const rows = await this.platform.prisma.$queryRaw<{ source_key: string }[]>`SELECT source_key FROM deployments WHERE source_key IS NOT NULL`;
    return new Set(rows.map((r) => r.source_key));
  }
}
