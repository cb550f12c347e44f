import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service.js';
import type { OwnedApplication } from './owner-principal.js';

/** The one query every owner-scoped dashboard route runs first: is `:appId` this owner's? */
@Injectable()
export class OwnedApplicationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findOwned(ownerId: string, applicationId: string): Promise<OwnedApplication | null> {
    return this.prisma.client.application.findFirst({ where: { id: applicationId, ownerId }, select: { id: true, name: true, slug: true } });
  }
}
