import { Injectable } from '@nestjs/common';
import type { IssuedToken } from '@slipway/crypto';
import { PrismaService } from '../../common/prisma.service.js';

const VIEW = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true, expiresAt: true } as const;

/** Personal access tokens belong to the owner (not to one application): scoped by owner id. */
@Injectable()
export class TokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(ownerId: string) {
    return this.prisma.client.personalAccessToken.findMany({ where: { ownerId }, orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }], select: VIEW });
  }

  create(ownerId: string, name: string, issued: IssuedToken) {
    return this.prisma.client.personalAccessToken.create({ data: { ownerId, name, prefix: issued.prefix, tokenHash: issued.hash }, select: VIEW });
  }

  async rename(ownerId: string, id: string, name: string) {
    const { count } = await this.prisma.client.personalAccessToken.updateMany({ where: { id, ownerId }, data: { name } });
    return count > 0;
  }

  async revoke(ownerId: string, id: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.client.personalAccessToken.updateMany({ where: { id, ownerId, revokedAt: null }, data: { revokedAt: at } });
    return count > 0;
  }

  rotate(ownerId: string, id: string, issued: IssuedToken) {
    return this.prisma.client.$transaction(async (tx) => {
      const old = await tx.personalAccessToken.updateManyAndReturn({ where: { id, ownerId, revokedAt: null }, data: { revokedAt: new Date() }, select: { name: true, expiresAt: true } });
      if (!old[0]) return null;
      return tx.personalAccessToken.create({ data: { ownerId, name: old[0].name, expiresAt: old[0].expiresAt, prefix: issued.prefix, tokenHash: issued.hash }, select: VIEW });
    });
  }
}
