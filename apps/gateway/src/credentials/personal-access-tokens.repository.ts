import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

@Injectable()
export class PersonalAccessTokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByPrefix(prefix: string) {
    return this.prisma.client.personalAccessToken.findUnique({
      where: { prefix },
      select: { id: true, ownerId: true, tokenHash: true, revokedAt: true, expiresAt: true, lastUsedAt: true },
    });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.personalAccessToken.updateMany({ where: { id, revokedAt: null }, data: { lastUsedAt: at } });
  }
}
