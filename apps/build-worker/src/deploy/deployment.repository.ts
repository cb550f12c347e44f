import { Inject, Injectable } from '@nestjs/common';
import type { DeployError, DeployStep } from '@slipway/contract';
import { Prisma, type PrismaClient } from '@slipway/db';

export const PRISMA = Symbol('PRISMA');

const ACTIVE = ['queued', 'building', 'releasing'] as const;

export interface Claim {
  attempt: number;
  sourceKey: string | null;
}

export interface ApplicationRecord {
  slug: string;
  secrets: { name: string; value: Buffer }[];
  cookieSecret: Buffer | null;
  database: { databaseName: string; roleName: string; password: Buffer } | null;
}

export interface ActiveDeployment {
  id: string;
  applicationId: string;
  status: string;
  deadlineAt: Date | null;
  updatedAt: Date;
}

type Findings = { spec?: unknown; warnings?: unknown[]; hazards?: unknown[] };

const json = (value: unknown) => value as Prisma.InputJsonValue;

/**
 * Deployment rows. Every write after the claim is fenced by the attempt number: once another
 * attempt has claimed the row (or it reached a final status), a stale worker's writes change
 * nothing and report false.
 */
@Injectable()
export class DeploymentRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  /** Takes the deployment for a new attempt; null when it is already finished or unknown. */
  async claim(applicationId: string, deploymentId: string): Promise<Claim | null> {
    const rows = await this.prisma.$queryRaw<{ attempts: number; source_key: string | null }[]>`
      UPDATE deployments SET attempts = attempts + 1, status = 'building', started_at = COALESCE(started_at, now()), updated_at = now()
      WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('queued', 'building', 'releasing')
      RETURNING attempts, source_key`;
    const row = rows[0];
    return row ? { attempt: row.attempts, sourceKey: row.source_key } : null;
  }

  async save(applicationId: string, deploymentId: string, attempt: number, steps: DeployStep[], findings: Findings & { status?: 'building' | 'releasing' } = {}): Promise<boolean> {
    const { count } = await this.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: ['building', 'releasing'] } },
      data: {
        steps: json(steps),
        ...(findings.status ? { status: findings.status } : {}),
        ...(findings.spec !== undefined ? { spec: json(findings.spec) } : {}),
        ...(findings.warnings ? { warnings: json(findings.warnings) } : {}),
        ...(findings.hazards ? { hazards: json(findings.hazards) } : {}),
      },
    });
    return count === 1;
  }

  async fail(applicationId: string, deploymentId: string, attempt: number, steps: DeployStep[], error: DeployError, findings: Findings = {}): Promise<boolean> {
    const { count } = await this.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: [...ACTIVE] } },
      data: {
        status: 'failed', finishedAt: new Date(), steps: json(steps), error: json(error),
        ...(findings.spec !== undefined ? { spec: json(findings.spec) } : {}),
        ...(findings.warnings ? { warnings: json(findings.warnings) } : {}),
        ...(findings.hazards ? { hazards: json(findings.hazards) } : {}),
      },
    });
    return count === 1;
  }

  /** Gives the task back (worker shutting down): queued again, steps pending, for another worker. */
  async handBack(applicationId: string, deploymentId: string, attempt: number, steps: DeployStep[]): Promise<boolean> {
    const { count } = await this.prisma.deployment.updateMany({
      where: { id: deploymentId, applicationId, attempts: attempt, status: { in: ['building', 'releasing'] } },
      data: { status: 'queued', steps: json(steps) },
    });
    return count === 1;
  }

  async application(applicationId: string): Promise<ApplicationRecord> {
    const app = await this.prisma.application.findUniqueOrThrow({
      where: { id: applicationId },
      select: { slug: true, secrets: { select: { name: true, value: true } }, signInService: { select: { cookieSecret: true } }, database: { select: { databaseName: true, roleName: true, password: true } } },
    });
    return {
      slug: app.slug,
      secrets: app.secrets.map((s) => ({ name: s.name, value: Buffer.from(s.value) })),
      cookieSecret: app.signInService ? Buffer.from(app.signInService.cookieSecret) : null,
      database: app.database ? { ...app.database, password: Buffer.from(app.database.password) } : null,
    };
  }

  /** Stores the release row (not live yet); an earlier attempt's row for this deployment is replaced. */
  async createRelease(applicationId: string, deploymentId: string, attempt: number, release: { id: string; kind: string; artifactKey: string; spec: unknown }): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const owned = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND attempts = ${attempt} AND status = 'releasing' FOR UPDATE`;
      if (owned.length === 0) return false;
      await tx.$executeRaw`
        DELETE FROM releases r WHERE r.deployment_id = ${deploymentId}::uuid AND NOT EXISTS (SELECT 1 FROM applications a WHERE a.live_release_id = r.id)`;
      await tx.release.create({ data: { id: release.id, applicationId, deploymentId, kind: release.kind, artifactKey: release.artifactKey, spec: json(release.spec) } });
      return true;
    });
  }

  /**
   * Makes the release live and the deployment `succeeded` in one transaction, only if this
   * attempt still owns the deployment: two workers can never both release it.
   */
  async makeLive(applicationId: string, deploymentId: string, attempt: number, releaseId: string, steps: DeployStep[]): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const owned = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND attempts = ${attempt} AND status = 'releasing' FOR UPDATE`;
      if (owned.length === 0) return false;
      await tx.application.update({ where: { id: applicationId }, data: { liveReleaseId: releaseId } });
      await tx.deployment.update({ where: { id: deploymentId }, data: { status: 'succeeded', finishedAt: new Date(), steps: json(steps), error: Prisma.DbNull } });
      return true;
    });
  }

  // --- reconciler

  async active(): Promise<ActiveDeployment[]> {
    return this.prisma.deployment.findMany({ where: { status: { in: [...ACTIVE] } }, select: { id: true, applicationId: true, status: true, deadlineAt: true, updatedAt: true }, orderBy: { createdAt: 'asc' }, take: 500 });
  }

  /** Fails a deployment that is still active, whoever holds it (deadline passed, worker lost). */
  async failActive(applicationId: string, deploymentId: string, error: DeployError): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ steps: DeployStep[] }[]>`
        SELECT steps FROM deployments WHERE id = ${deploymentId}::uuid AND application_id = ${applicationId}::uuid AND status IN ('queued', 'building', 'releasing') FOR UPDATE SKIP LOCKED`;
      const row = rows[0];
      if (!row) return false;
      const steps = (row.steps ?? []).map((s) => (s.status === 'running' ? { ...s, status: 'failed' as const, finishedAt: new Date().toISOString() } : s.status === 'pending' ? { ...s, status: 'skipped' as const } : s));
      await tx.deployment.update({ where: { id: deploymentId }, data: { status: 'failed', finishedAt: new Date(), error: json(error), steps: json(steps) } });
      return true;
    });
  }
}
