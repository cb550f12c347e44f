import { Inject, Injectable } from '@nestjs/common';
import type { PrismaClient } from '@slipway/db';
import { PLATFORM_PRISMA } from '../platform/index.js';

@Injectable()
export class TenantRepository {
  constructor(@Inject(PLATFORM_PRISMA) private readonly prisma: PrismaClient) {}

  findBySlug(slug: string) {
    return this.prisma.application.findUnique({
      where: { slug },
      select: {
        id: true,
        slug: true,
        allowLocalhost: true,
        database: { select: { databaseName: true, roleName: true, password: true } },
        signInService: { select: { cookieSecret: true, settings: true } },
        trustedOrigins: { select: { origin: true } },
      },
    });
  }
}
