import type { Plan } from '@slipway/platform-schema';
import { asOwnerId, type OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

/** The owner behind a live session, and the session's id. */
export interface SessionOwner {
  id: OwnerId;
  email: string;
  name: string | null;
  plan: Plan;
  sessionId: string;
}

/** owner_sessions: dashboard sessions, stored by the SHA-256 of their token only. */
export class OwnerSessions {
  constructor(private readonly platform: PlatformInfrastructure) {}

  async create(ownerId: OwnerId, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.platform.prisma.ownerSession.create({ data: { ownerId, tokenHash, expiresAt } });
  }

  async findLive(tokenHash: string, now: Date): Promise<SessionOwner | null> {
    const row = await this.platform.prisma.ownerSession.findFirst({
      where: { tokenHash, expiresAt: { gt: now } },
      select: { id: true, owner: { select: { id: true, email: true, name: true, plan: true } } },
    });
    return row ? { ...row.owner, id: asOwnerId(row.owner.id), sessionId: row.id } : null;
  }

  async delete(ownerId: OwnerId, sessionId: string): Promise<void> {
    await this.platform.prisma.ownerSession.deleteMany({ where: { id: sessionId, ownerId } });
  }

  async deleteExpired(ownerId: OwnerId, now: Date): Promise<void> {
    await this.platform.prisma.ownerSession.deleteMany({ where: { ownerId, expiresAt: { lte: now } } });
  }
}
