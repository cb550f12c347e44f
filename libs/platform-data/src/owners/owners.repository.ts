import { Injectable } from '@nestjs/common';
import { Prisma, type Plan } from '@slipway/platform-schema';
import { asOwnerId, type OwnerId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { bootstrapAccount, type BootstrapAccountInput, type BootstrappedAccount } from './bootstrap-account.js';
import { OwnerSessions } from './owner-sessions.js';

export type { BootstrapAccountInput, BootstrappedAccount } from './bootstrap-account.js';
export type { SessionOwner } from './owner-sessions.js';

export interface StoredOwner {
  id: OwnerId;
  email: string;
  name: string | null;
  plan: Plan;
  passwordHash: string | null;
}

export class EmailTakenError extends Error {
  override readonly name = 'EmailTakenError';
}

const OWNER_FIELDS = { id: true, email: true, name: true, plan: true, passwordHash: true } as const;
const stored = (row: Omit<StoredOwner, 'id'> & { id: string }): StoredOwner => ({ ...row, id: asOwnerId(row.id) });

/**
 * Owners (the platform's users) and their dashboard sessions (`sessions`).
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class OwnersRepository {
  readonly sessions: OwnerSessions;

  constructor(private readonly platform: PlatformInfrastructure) {
    this.sessions = new OwnerSessions(platform);
  }

  /** The owner a personal access token belongs to, as an owners'-API principal (no password hash). */
  async findById(ownerId: OwnerId): Promise<Omit<StoredOwner, 'passwordHash'> | null> {
    const row = await this.platform.prisma.owner.findUnique({ where: { id: ownerId }, select: { id: true, email: true, name: true, plan: true } });
    return row ? { ...row, id: asOwnerId(row.id) } : null;
  }

  /** The owner of an application (a project API key acts for its application's owner, on that application only). */
  async findByApplication(applicationId: string): Promise<Omit<StoredOwner, 'passwordHash'> | null> {
    const row = await this.platform.prisma.application.findUnique({
      where: { id: applicationId },
      select: { owner: { select: { id: true, email: true, name: true, plan: true } } },
    });
    return row ? { ...row.owner, id: asOwnerId(row.owner.id) } : null;
  }

  async findByEmail(email: string): Promise<StoredOwner | null> {
    const row = await this.platform.prisma.owner.findUnique({ where: { email }, select: OWNER_FIELDS });
    return row ? stored(row) : null;
  }

  /**
   * Creates the owner; an owner made by `slipway admin bootstrap` (no password yet) is claimed by
   * the first sign-up with its email instead of being refused.
   */
  async create(email: string, name: string | null, passwordHash: string): Promise<StoredOwner> {
    try {
      return stored(
        await this.platform.prisma.$transaction(async (tx) => {
          const claimed = await tx.owner.updateManyAndReturn({
            where: { email, passwordHash: null },
            data: { passwordHash, name: name ?? undefined },
            select: OWNER_FIELDS,
          });
          if (claimed[0]) return claimed[0];
          return tx.owner.create({ data: { email, name, passwordHash }, select: OWNER_FIELDS });
        }),
      );
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new EmailTakenError();
      throw error;
    }
  }

  /** The operator's `slipway admin bootstrap`: owner, application and credentials in one serializable transaction. */
  bootstrapAccount(input: BootstrapAccountInput): Promise<BootstrappedAccount> {
    return bootstrapAccount(this.platform, input);
  }
}
