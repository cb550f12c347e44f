import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/db';
import { PrismaService } from '../common/prisma.service.js';
import { initialSteps } from './deployment-steps.js';

export interface NewDeployment {
  id: string;
  sourceKey: string;
  sourceBytes: number;
  deadlineAt: Date;
}

export class ActiveDeployExistsError extends Error {
  override readonly name = 'ActiveDeployExistsError';
}

export class HourlyLimitReachedError extends Error {
  override readonly name = 'HourlyLimitReachedError';
}

const ACTIVE_INDEX = 'deployments_one_active_per_application';

@Injectable()
export class DeploymentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The application's queued/building/releasing deployment, if any. */
  async findActiveId(applicationId: string): Promise<string | null> {
    const row = await this.prisma.client.deployment.findFirst({
      where: { applicationId, status: { in: ['queued', 'building', 'releasing'] } },
      select: { id: true },
    });
    return row?.id ?? null;
  }

  /** Creation times of the application's deployments since `since`, oldest first. */
  async createdSince(applicationId: string, since: Date): Promise<Date[]> {
    const rows = await this.prisma.client.deployment.findMany({
      where: { applicationId, createdAt: { gt: since } },
      select: { createdAt: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((r) => r.createdAt);
  }

  /**
   * Inserts the queued row and commits it. The partial unique index is the real guard against
   * two active deploys (→ ActiveDeployExistsError); the hourly count is re-checked inside the
   * same transaction, after the insert has serialised concurrent deploys of the application.
   */
  async insertQueued(applicationId: string, deployment: NewDeployment, hourlyLimit: number): Promise<void> {
    try {
      await this.prisma.client.$transaction(async (tx) => {
        await tx.deployment.create({
          data: {
            id: deployment.id,
            applicationId,
            status: 'queued',
            steps: initialSteps() as unknown as Prisma.InputJsonValue,
            sourceKey: deployment.sourceKey,
            sourceBytes: BigInt(deployment.sourceBytes),
            deadlineAt: deployment.deadlineAt,
          },
        });
        const recent = await tx.deployment.count({
          where: { applicationId, id: { not: deployment.id }, createdAt: { gt: new Date(Date.now() - 3_600_000) } },
        });
        if (recent >= hourlyLimit) throw new HourlyLimitReachedError();
      });
    } catch (error) {
      if (isActiveIndexViolation(error)) throw new ActiveDeployExistsError();
      throw error;
    }
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
  if (!(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== 'P2002') return false;
  return JSON.stringify(error.meta ?? {}).includes(ACTIVE_INDEX) || JSON.stringify(error.meta ?? {}).includes('application_id');
}
