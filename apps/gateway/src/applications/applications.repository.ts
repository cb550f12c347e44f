import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/db';
import { PrismaService } from '../common/prisma.service.js';
import type { OwnedApplication } from '../dashboard/common/owner-principal.js';

export class SlugTakenError extends Error {
  override readonly name = 'SlugTakenError';
}

const SUMMARY = { id: true, name: true, slug: true } as const;

@Injectable()
export class ApplicationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  listOwned(ownerId: string) {
    return this.prisma.client.application.findMany({
      where: { ownerId },
      orderBy: { createdAt: 'desc' },
      select: {
        ...SUMMARY,
        createdAt: true,
        deployments: { orderBy: { createdAt: 'desc' }, take: 1, select: { id: true, status: true, createdAt: true } },
      },
    });
  }

  /** Slugs already taken among `candidates` (by anyone: slugs are global addresses). */
  async takenSlugs(candidates: string[]): Promise<Set<string>> {
    const rows = await this.prisma.client.application.findMany({ where: { slug: { in: candidates } }, select: { slug: true } });
    return new Set(rows.map((r) => r.slug));
  }

  async create(ownerId: string, name: string, slug: string): Promise<OwnedApplication & { createdAt: Date }> {
    try {
      return await this.prisma.client.application.create({ data: { ownerId, name, slug }, select: { ...SUMMARY, createdAt: true } });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new SlugTakenError();
      throw error;
    }
  }

  details(ownerId: string, applicationId: string) {
    return this.prisma.client.application.findFirst({
      where: { id: applicationId, ownerId },
      select: { ...SUMMARY, createdAt: true, liveReleaseId: true, signInService: { select: { id: true } }, database: { select: { databaseName: true } } },
    });
  }
}
