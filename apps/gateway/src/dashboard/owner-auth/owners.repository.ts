import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/db';
import type { PlanName } from '@slipway/contract';
import { PrismaService } from '../../common/prisma.service.js';

export interface StoredOwner {
  id: string;
  email: string;
  name: string | null;
  plan: PlanName;
  passwordHash: string | null;
}

export class EmailTakenError extends Error {
  override readonly name = 'EmailTakenError';
}

const OWNER_FIELDS = { id: true, email: true, name: true, plan: true, passwordHash: true } as const;

@Injectable()
export class OwnersRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByEmail(email: string): Promise<StoredOwner | null> {
    return this.prisma.client.owner.findUnique({ where: { email }, select: OWNER_FIELDS });
  }

  /**
   * Creates the owner; an owner made by `slipway admin bootstrap` (no password yet) is claimed by
   * the first sign-up with its email instead of being refused.
   */
  async create(email: string, name: string | null, passwordHash: string): Promise<StoredOwner> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        const claimed = await tx.owner.updateManyAndReturn({ where: { email, passwordHash: null }, data: { passwordHash, name: name ?? undefined }, select: OWNER_FIELDS });
        if (claimed[0]) return claimed[0];
        return tx.owner.create({ data: { email, name, passwordHash }, select: OWNER_FIELDS });
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new EmailTakenError();
      throw error;
    }
  }

  /** Application databases the owner holds (they count against the plan's allowance). */
  countDatabases(ownerId: string): Promise<number> {
    return this.prisma.client.applicationDatabase.count({ where: { ownerId } });
  }
}
