import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

export class TooManySecretsError extends Error {
  override readonly name = 'TooManySecretsError';
}

@Injectable()
export class SecretsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async names(applicationId: string): Promise<string[]> {
    const rows = await this.prisma.client.secret.findMany({ where: { applicationId }, select: { name: true }, orderBy: { name: 'asc' } });
    return rows.map((r) => r.name);
  }

  /**
   * Applies upserts (sealed values) and deletes in one transaction and answers the names now
   * set; rolls everything back when the application would hold more than `maxCount`.
   */
  async apply(applicationId: string, upserts: Map<string, Uint8Array<ArrayBuffer>>, deletes: string[], maxCount: number): Promise<string[]> {
    return this.prisma.client.$transaction(async (tx) => {
      if (deletes.length) await tx.secret.deleteMany({ where: { applicationId, name: { in: deletes } } });
      for (const [name, value] of upserts) {
        await tx.secret.upsert({
          where: { applicationId_name: { applicationId, name } },
          create: { applicationId, name, value },
          update: { value },
        });
      }
      const rows = await tx.secret.findMany({ where: { applicationId }, select: { name: true }, orderBy: { name: 'asc' } });
      if (rows.length > maxCount) throw new TooManySecretsError();
      return rows.map((r) => r.name);
    });
  }
}
