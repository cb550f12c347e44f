import { Injectable } from '@nestjs/common';
import { PrismaService } from '../common/prisma.service.js';

export interface StoredApiKey {
  id: string;
  applicationId: string;
  keyHash: string;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByPrefix(prefix: string): Promise<StoredApiKey | null> {
    return this.prisma.client.apiKey.findUnique({
      where: { prefix },
      select: { id: true, applicationId: true, keyHash: true, revokedAt: true, lastUsedAt: true },
    });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.apiKey.updateMany({ where: { id, revokedAt: null }, data: { lastUsedAt: at } });
  }
}
