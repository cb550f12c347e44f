import { Injectable } from '@nestjs/common';
import type { IssuedToken } from '@slipway/crypto';
import { PrismaService } from '../../common/prisma.service.js';

const VIEW = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

/** The dashboard's side of api_keys: every query is scoped by the application. */
@Injectable()
export class DashboardApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(applicationId: string) {
    return this.prisma.client.apiKey.findMany({ where: { applicationId }, orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }], select: VIEW });
  }

  create(applicationId: string, name: string, issued: IssuedToken) {
    return this.prisma.client.apiKey.create({ data: { applicationId, name, prefix: issued.prefix, keyHash: issued.hash }, select: VIEW });
  }

  async rename(applicationId: string, id: string, name: string) {
    const { count } = await this.prisma.client.apiKey.updateMany({ where: { id, applicationId }, data: { name } });
    return count > 0;
  }

  /** Revokes a live key; answers its name, or null when there is no such live key. */
  async revoke(applicationId: string, id: string, at: Date): Promise<string | null> {
    const rows = await this.prisma.client.apiKey.updateManyAndReturn({ where: { id, applicationId, revokedAt: null }, data: { revokedAt: at }, select: { name: true } });
    return rows[0]?.name ?? null;
  }

  /** Revokes `id` and issues its replacement under the same name in one transaction. */
  rotate(applicationId: string, id: string, issued: IssuedToken) {
    return this.prisma.client.$transaction(async (tx) => {
      const old = await tx.apiKey.updateManyAndReturn({ where: { id, applicationId, revokedAt: null }, data: { revokedAt: new Date() }, select: { name: true } });
      if (!old[0]) return null;
      return tx.apiKey.create({ data: { applicationId, name: old[0].name, prefix: issued.prefix, keyHash: issued.hash }, select: VIEW });
    });
  }
}
