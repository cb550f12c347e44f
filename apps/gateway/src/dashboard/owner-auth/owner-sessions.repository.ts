import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service.js';
import type { OwnerPrincipal } from '../common/owner-principal.js';

@Injectable()
export class OwnerSessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(ownerId: string, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.prisma.client.ownerSession.create({ data: { ownerId, tokenHash, expiresAt } });
  }

  async findLive(tokenHash: string, now: Date): Promise<OwnerPrincipal | null> {
    const row = await this.prisma.client.ownerSession.findFirst({
      where: { tokenHash, expiresAt: { gt: now } },
      select: { id: true, owner: { select: { id: true, email: true, name: true, plan: true } } },
    });
    return row ? { ...row.owner, sessionId: row.id } : null;
  }

  async delete(ownerId: string, sessionId: string): Promise<void> {
    await this.prisma.client.ownerSession.deleteMany({ where: { id: sessionId, ownerId } });
  }

  async deleteExpired(ownerId: string, now: Date): Promise<void> {
    await this.prisma.client.ownerSession.deleteMany({ where: { ownerId, expiresAt: { lte: now } } });
  }
}
