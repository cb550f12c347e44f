import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/db';
import { PrismaService } from '../common/prisma.service.js';

export class DomainTakenError extends Error {
  override readonly name = 'DomainTakenError';
}

/** The claim was removed while it was being checked. */
export class DomainGoneError extends Error {
  override readonly name = 'DomainGoneError';
}

const VIEW = {
  id: true,
  applicationId: true,
  hostname: true,
  verificationToken: true,
  verifiedAt: true,
  checkedAt: true,
  checkError: true,
  createdAt: true,
  origins: { select: { origin: true }, orderBy: { origin: 'asc' } },
} as const;

export type DomainRow = Prisma.DomainGetPayload<{ select: typeof VIEW }>;

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

/**
 * Claims of custom domains and the trusted origins a VERIFIED claim produces (source
 * `custom_domain`): the sign-in service reads trusted_origins, so a claim's state and its origins
 * change in one transaction. The database keeps one verified holder per name
 * (`domains_one_verified_holder`): a second verification loses with DomainTakenError.
 */
@Injectable()
export class DomainsRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(applicationId: string): Promise<DomainRow[]> {
    return this.prisma.client.domain.findMany({ where: { applicationId }, orderBy: { hostname: 'asc' }, select: VIEW });
  }

  find(applicationId: string, id: string): Promise<DomainRow | null> {
    return this.prisma.client.domain.findFirst({ where: { id, applicationId }, select: VIEW });
  }

  /** The verified claim of `hostname` by another application, if any. */
  verifiedElsewhere(hostname: string, applicationId: string) {
    return this.prisma.client.domain.findFirst({ where: { hostname, verifiedAt: { not: null }, applicationId: { not: applicationId } }, select: { id: true, applicationId: true, verificationToken: true } });
  }

  /** A new, unverified claim: it routes nowhere and is trusted nowhere. */
  async add(applicationId: string, hostname: string, verificationToken: string): Promise<DomainRow> {
    try {
      return await this.prisma.client.domain.create({ data: { applicationId, hostname, verificationToken }, select: VIEW });
    } catch (error) {
      if (isUniqueViolation(error)) throw new DomainTakenError();
      throw error;
    }
  }

  /**
   * The claim's record is in place: it becomes (or stays) the verified holder and gets its origins.
   * `displace`: a verified claim of another application whose own record is gone loses the name
   * in the same transaction.
   */
  async markVerified(claim: DomainRow, origins: string[], displace?: { id: string; reason: string }): Promise<DomainRow> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        if (displace) await this.unverifyIn(tx, displace.id, displace.reason);
        const now = new Date();
        const { count } = await tx.domain.updateMany({ where: { id: claim.id }, data: { verifiedAt: claim.verifiedAt ?? now, checkedAt: now, checkError: null } });
        if (count === 0) throw new DomainGoneError();
        await tx.trustedOrigin.createMany({ data: origins.map((origin) => ({ applicationId: claim.applicationId, origin, source: 'custom_domain' as const, domainId: claim.id })), skipDuplicates: true });
        return tx.domain.findUniqueOrThrow({ where: { id: claim.id }, select: VIEW });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new DomainTakenError();
      throw error;
    }
  }

  /** A failed check: recorded; `unverify` also takes the name and its origins away from the claim. */
  async markFailed(id: string, reason: string, unverify: boolean): Promise<void> {
    await this.prisma.client.$transaction(async (tx) => {
      if (unverify) await this.unverifyIn(tx, id, reason);
      else await tx.domain.updateMany({ where: { id }, data: { checkedAt: new Date(), checkError: reason } });
    });
  }

  /** Removes the claim and (in the same transaction) the origins it produced. */
  async remove(applicationId: string, id: string): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      await tx.trustedOrigin.deleteMany({ where: { applicationId, domainId: id, source: 'custom_domain' } });
      const { count } = await tx.domain.deleteMany({ where: { id, applicationId } });
      return count > 0;
    });
  }

  private async unverifyIn(tx: Prisma.TransactionClient, id: string, reason: string): Promise<void> {
    await tx.trustedOrigin.deleteMany({ where: { domainId: id, source: 'custom_domain' } });
    await tx.domain.updateMany({ where: { id }, data: { verifiedAt: null, checkedAt: new Date(), checkError: reason } });
  }
}
