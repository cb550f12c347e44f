import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

@Injectable()
export class DatabaseRepository {
  constructor(private readonly prisma: PrismaService) {}

  find(applicationId: string) {
    return this.prisma.client.applicationDatabase.findUnique({ where: { applicationId }, select: { databaseName: true, roleName: true, password: true, createdAt: true } });
  }

  countForOwner(ownerId: string): Promise<number> {
    return this.prisma.client.applicationDatabase.count({ where: { ownerId } });
  }

  /** Size on disk; null when the database is not (or no longer) on this server. */
  async sizeBytes(databaseName: string): Promise<number | null> {
    try {
      const rows = await this.prisma.client.$queryRaw<{ size: bigint | null }[]>`SELECT pg_database_size(datname) AS size FROM pg_database WHERE datname = ${databaseName}`;
      return rows[0]?.size === undefined || rows[0].size === null ? null : Number(rows[0].size);
    } catch {
      return null;
    }
  }
}
