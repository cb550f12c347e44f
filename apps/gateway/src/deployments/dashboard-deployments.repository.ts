import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

const PAGE = 50;

@Injectable()
export class DashboardDeploymentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The latest deployments of the application, newest first. */
  list(applicationId: string) {
    return this.prisma.client.deployment.findMany({
      where: { applicationId },
      orderBy: { createdAt: 'desc' },
      take: PAGE,
      select: { id: true, status: true, warnings: true, hazards: true, createdAt: true, startedAt: true, finishedAt: true },
    });
  }

  async releases(applicationId: string) {
    const [app, rows] = await Promise.all([
      this.prisma.client.application.findUnique({ where: { id: applicationId }, select: { liveReleaseId: true } }),
      this.prisma.client.release.findMany({ where: { applicationId }, orderBy: { createdAt: 'desc' }, take: PAGE, select: { id: true, deploymentId: true, kind: true, createdAt: true } }),
    ]);
    return rows.map((r) => ({ ...r, live: r.id === app?.liveReleaseId }));
  }
}
