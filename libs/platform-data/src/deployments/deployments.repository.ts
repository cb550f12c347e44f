import { Injectable } from '@nestjs/common';
import { pendingSteps, type DeployError, type DeployStep } from '@slipway/contract';
import type { ApplicationId, DeploymentId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { ActiveDeployExistsError, HourlyLimitReachedError } from './admission-errors.js';
import { ApplicationInputs } from './application-inputs.js';
import { BuildQueue } from './build-queue.js';
import { LiveRoutes } from './live-routes.js';
import { asJson } from './json.js';
import { Releases } from './releases.js';
import { StoredBytes } from './stored-bytes.js';

// The folder's other files are exported through this one (the lib's index.ts names the repository only).
export * from './admission-errors.js';
export * from './application-inputs.js';
export * from './build-queue.js';
export * from './live-routes.js';
export * from './releases.js';
export * from './stored-bytes.js';

export interface NewDeployment {
  id: DeploymentId;
  sourceKey: string;
  sourceBytes: number;
  /** The directory of the source to build (the deploy's `rootDirectory`, checked by the gateway); null or absent: the whole source. */
  rootDirectory?: string | null;
  /** The latest time its build may START (a queued row past it fails with `queue_timeout`); the start sets the run's own deadline. */
  deadlineAt: Date;
}

export interface AdmissionState {
  activeId: string | null;
  recentCreatedAtMs: number[];
  nowMs: number;
}

export interface DeploymentClaim {
  attempt: number;
  sourceKey: string | null;
}

/** What the analyze, scan and package steps find, saved with the steps. */
export interface DeploymentFindings {
  spec?: unknown;
  warnings?: unknown[];
  hazards?: unknown[];
}

export interface ActiveDeployment {
  id: string;
  applicationId: string;
  status: string;
  deadlineAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const ACTIVE = ['queued', 'building', 'releasing'] as const;
const ACTIVE_INDEX = 'deployments_one_active_per_application';
const INITIAL_STEPS = JSON.stringify(pendingSteps());
const PAGE = 50;

const ADMISSION = `SELECT
    (SELECT id::text FROM deployments
      WHERE application_id = $1::uuid AND status IN ('queued', 'building', 'releasing') LIMIT 1) AS active,
    ARRAY(SELECT (extract(epoch FROM created_at) * 1000)::float8 FROM deployments
      WHERE application_id = $1::uuid AND created_at > now() - interval '1 hour' ORDER BY created_at) AS recent,
    (extract(epoch FROM now()) * 1000)::float8 AS now_ms`;

const INSERT_QUEUED = `INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at, root_directory, updated_at)
  SELECT $1::uuid, $2::uuid, 'queued'::"DeploymentStatus", $3::jsonb, $4::text, $5::bigint, $6::timestamptz, $8::text, now()
  WHERE (SELECT count(*) FROM deployments
          WHERE application_id = $2::uuid AND created_at > now() - interval '1 hour') < $7::int`;

const findingsData = (findings: DeploymentFindings) => ({
  ...(findings.spec !== undefined ? { spec: asJson(findings.spec) } : {}),
  ...(findings.warnings ? { warnings: asJson(findings.warnings) } : {}),
  ...(findings.hazards ? { hazards: asJson(findings.hazards) } : {}),
});

/**
 * Deployments (the tasks the worker runs) and the releases they produce.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data"):
 * the gateway's admission and poll, the worker's fenced writes and the reconciler's sweep here;
 * releases (`releases`), the edge's route table (`liveRoutes`), what a build or a running
 * release is given of its application (`inputs`) and stored bytes (`storage`) in their own files.
 *
 * Every worker write after the claim is fenced by the attempt number: once another attempt has
 * claimed the row (or it reached a final status), a stale worker's writes change nothing and
 * report false.
 */
@Injectable()
export class DeploymentsRepository {
  readonly releases: Releases;
  readonly liveRoutes: LiveRoutes;
  readonly inputs: ApplicationInputs;
  /** Which queued deployment may start now (the fair pick across owners) and the start itself. */
  readonly queue: BuildQueue;
  /** What each owner stores (sources in flight, kept releases' artifacts). */
  readonly storage: StoredBytes;

  constructor(private readonly platform: PlatformInfrastructure) {
    this.queue = new BuildQueue(platform);
    this.releases = new Releases(platform);
    this.storage = new StoredBytes(platform);
    this.liveRoutes = new LiveRoutes(platform);
    this.inputs = new ApplicationInputs(platform);
  }

  // --- the gateway: POST /api/v1/deploy (hot path: named prepared statements on the pool, not Prisma)

  /**
   * In one round trip: the active deployment (if any), the creation times (epoch ms, oldest
   * first) of the deployments of the last hour, and the database's clock. A named statement:
   * it runs on every deploy, where a Prisma `$queryRaw` costs ~0.3 ms more CPU (bench/README.md).
   */
  async admissionState(applicationId: ApplicationId): Promise<AdmissionState> {
    const { rows } = await this.platform.pool.query<{ active: string | null; recent: number[]; now_ms: number }>({
      name: 'gateway_deploy_admission',
      text: ADMISSION,
      values: [applicationId],
    });
    const row = rows[0]!;
    return { activeId: row.active, recentCreatedAtMs: row.recent.map(Number), nowMs: Number(row.now_ms) };
  }

  /**
   * Inserts (and so commits) the queued row in one statement, only while the application has
   * had fewer than `hourlyLimit` deployments in the last hour (→ HourlyLimitReachedError). The
   * partial unique index is the real guard against two active deploys (→ ActiveDeployExistsError):
   * a concurrent insert for the same application waits for the first to commit, then fails, so
   * the hourly count cannot race either.
   */
  async insertQueued(applicationId: ApplicationId, deployment: NewDeployment, hourlyLimit: number): Promise<void> {
    let inserted: number;
    try {
      const result = await this.platform.pool.query({
        name: 'gateway_deploy_insert_queued',
        text: INSERT_QUEUED,
        values: [
          deployment.id,
          applicationId,
          INITIAL_STEPS,
          deployment.sourceKey,
          String(deployment.sourceBytes),
          deployment.deadlineAt.toISOString(),
          hourlyLimit,
          deployment.rootDirectory ?? null,
        ],
      });
      inserted = result.rowCount ?? 0;
    } catch (error) {
      if (isActiveIndexViolation(error)) throw new ActiveDeployExistsError();
      throw error;
    }
    if (inserted === 0) throw new HourlyLimitReachedError();
  }

  // --- the gateway: polls and the dashboard's history

  /** One deployment as its application sees it (another application's does not exist). */
  /** One deployment of the application (`previews`: or of one of its previews). */
  findForApplication(applicationId: ApplicationId, id: DeploymentId, options: { previews?: boolean } = {}) {
    return this.platform.prisma.deployment.findFirst({
      where: options.previews ? { id, OR: [{ applicationId }, { application: { parentId: applicationId } }] } : { id, applicationId },
      select: {
        id: true,
        status: true,
        steps: true,
        spec: true,
        warnings: true,
        hazards: true,
        error: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        application: { select: { slug: true } },
      },
    });
  }

  /** The latest deployments of the application, newest first. */
  list(applicationId: ApplicationId) {
    return this.platform.prisma.deployment.findMany({
      where: { applicationId },
      orderBy: { createdAt: 'desc' },
      take: PAGE,
      select: { id: true, status: true, warnings: true, hazards: true, createdAt: true, startedAt: true, finishedAt: true },
    });
  }

  // --- the build worker: one attempt's fenced writes

  /** Takes the deployment for a new attempt; null when it is already finished or unknown. */
  async claim(applicationId: ApplicationId, deploymentId: DeploymentId): Promise<DeploymentClaim | null> {
    const rows = await this.platform.prisma.$queryRaw<{ attempts: number; source_key: string | null }[]>`
      UPDATE deployments SET attempts = attempts + 1, status = 'building', started_at = COALESCE(started_at, now()), updated_at = now()
      WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('queued', 'building', 'releasing')
      RETURNING attempts, source_key`;
    const row = rows[0];
    return row ? { attempt: row.attempts, sourceKey: row.source_key } : null;
  }

  async save(
    applicationId: ApplicationId,
    deploymentId: DeploymentId,
    attempt: number,
    steps: DeployStep[],
    findings: DeploymentFindings & { status?: 'building' | 'releasing' } = {},
  ): Promise<boolean> {
    const { count } = await this.platform.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: ['building', 'releasing'] } },
      data: { steps: asJson(steps), ...(findings.status ? { status: findings.status } : {}), ...findingsData(findings) },
    });
    return count === 1;
  }

  async fail(
    applicationId: ApplicationId,
    deploymentId: DeploymentId,
    attempt: number,
    steps: DeployStep[],
    error: DeployError,
    findings: DeploymentFindings = {},
  ): Promise<boolean> {
    const { count } = await this.platform.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: [...ACTIVE] } },
      data: { status: 'failed', finishedAt: new Date(), steps: asJson(steps), error: asJson(error), ...findingsData(findings) },
    });
    return count === 1;
  }

  /** Gives the task back (worker shutting down): queued again, steps pending, for another worker. */
  async handBack(applicationId: ApplicationId, deploymentId: DeploymentId, attempt: number, steps: DeployStep[]): Promise<boolean> {
    const { count } = await this.platform.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: ['building', 'releasing'] } },
      data: { status: 'queued', steps: asJson(steps) },
    });
    return count === 1;
  }

  // --- the reconciler (every application: it sweeps the whole platform)

  async active(): Promise<ActiveDeployment[]> {
    return this.platform.prisma.deployment.findMany({
      where: { status: { in: [...ACTIVE] } },
      select: { id: true, applicationId: true, status: true, deadlineAt: true, createdAt: true, updatedAt: true },
      orderBy: { createdAt: 'asc' },
      take: 500,
    });
  }

  /**
   * Fails a deployment that is still active, whoever holds it (deadline passed, worker lost).
   * `onlyIf` repeats what the caller saw, so a row that moved on since (a queued row that started
   * and got a fresh deadline) is left alone.
   */
  async failActive(
    applicationId: ApplicationId,
    deploymentId: DeploymentId,
    error: DeployError,
    onlyIf: { status?: 'queued' | 'running'; deadlineBefore?: Date } = {},
  ): Promise<boolean> {
    const statuses = onlyIf.status === 'queued' ? ['queued'] : onlyIf.status === 'running' ? ['building', 'releasing'] : [...ACTIVE];
    const anyDeadline = onlyIf.deadlineBefore === undefined;
    const deadlineBefore = onlyIf.deadlineBefore ?? new Date(0);
    return this.platform.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ steps: DeployStep[] }[]>`
        SELECT steps FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status::text = ANY(${statuses}::text[])
           AND (${anyDeadline} OR deadline_at < ${deadlineBefore}) FOR UPDATE SKIP LOCKED`;
      const row = rows[0];
      if (!row) return false;
      const steps = (row.steps ?? []).map((s) =>
        s.status === 'running'
          ? { ...s, status: 'failed' as const, finishedAt: new Date().toISOString() }
          : s.status === 'pending'
            ? { ...s, status: 'skipped' as const }
            : s,
      );
      await tx.deployment.update({
        where: { id: deploymentId },
        data: { status: 'failed', finishedAt: new Date(), error: asJson(error), steps: asJson(steps) },
      });
      return true;
    });
  }
}

function isActiveIndexViolation(error: unknown): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown };
  return pgError?.code === '23505' && pgError.constraint === ACTIVE_INDEX;
}
