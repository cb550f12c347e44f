import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';
import { pendingSteps as initialSteps } from '@slipway/contract';

export interface NewDeployment {
  id: string;
  sourceKey: string;
  sourceBytes: number;
  deadlineAt: Date;
}

export interface AdmissionState {
  activeId: string | null;
  recentCreatedAtMs: number[];
  nowMs: number;
}

export class ActiveDeployExistsError extends Error {
  override readonly name = 'ActiveDeployExistsError';
}

export class HourlyLimitReachedError extends Error {
  override readonly name = 'HourlyLimitReachedError';
}

const ACTIVE_INDEX = 'deployments_one_active_per_application';
const INITIAL_STEPS = JSON.stringify(initialSteps());

const ADMISSION = `SELECT
    (SELECT id::text FROM deployments
      WHERE application_id = $1::uuid AND status IN ('queued', 'building', 'releasing') LIMIT 1) AS active,
    ARRAY(SELECT (extract(epoch FROM created_at) * 1000)::float8 FROM deployments
      WHERE application_id = $1::uuid AND created_at > now() - interval '1 hour' ORDER BY created_at) AS recent,
    (extract(epoch FROM now()) * 1000)::float8 AS now_ms`;

const INSERT_QUEUED = `INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at, updated_at)
  SELECT $1::uuid, $2::uuid, 'queued'::"DeploymentStatus", $3::jsonb, $4::text, $5::bigint, $6::timestamptz, now()
  WHERE (SELECT count(*) FROM deployments
          WHERE application_id = $2::uuid AND created_at > now() - interval '1 hour') < $7::int`;

@Injectable()
export class DeploymentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * In one round trip: the active deployment (if any), the creation times (epoch ms, oldest
   * first) of the deployments of the last hour, and the database's clock. Named prepared
   * statements on the pg pool (not Prisma): both run on every deploy (PrismaService).
   */
  async admissionState(applicationId: string): Promise<AdmissionState> {
    const { rows } = await this.prisma.pool.query<{ active: string | null; recent: number[]; now_ms: number }>({ name: 'gateway_deploy_admission', text: ADMISSION, values: [applicationId] });
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
  async insertQueued(applicationId: string, deployment: NewDeployment, hourlyLimit: number): Promise<void> {
    let inserted: number;
    try {
      const result = await this.prisma.pool.query({
        name: 'gateway_deploy_insert_queued',
        text: INSERT_QUEUED,
        values: [deployment.id, applicationId, INITIAL_STEPS, deployment.sourceKey, String(deployment.sourceBytes), deployment.deadlineAt.toISOString(), hourlyLimit],
      });
      inserted = result.rowCount ?? 0;
    } catch (error) {
      if (isActiveIndexViolation(error)) throw new ActiveDeployExistsError();
      throw error;
    }
    if (inserted === 0) throw new HourlyLimitReachedError();
  }

  findForApplication(applicationId: string, id: string) {
    return this.prisma.client.deployment.findFirst({
      where: { id, applicationId },
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
}

function isActiveIndexViolation(error: unknown): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown };
  return pgError?.code === '23505' && pgError.constraint === ACTIVE_INDEX;
}
