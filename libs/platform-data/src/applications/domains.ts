import { Prisma } from '@slipway/platform-schema';
import { asApplicationId, type ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

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
  checkFailures: true,
  createdAt: true,
  origins: { select: { origin: true }, orderBy: { origin: 'asc' } },
} as const;

export type DomainRow = Prisma.DomainGetPayload<{ select: typeof VIEW }>;

/** A verified claim due for its periodic re-check. */
export interface DueDomainClaim {
  id: string;
  applicationId: ApplicationId;
  hostname: string;
  verificationToken: string;
  checkFailures: number;
}

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

/**
 * Claims of custom domains and the trusted origins a VERIFIED claim produces (source
 * `custom_domain`): the sign-in service reads trusted_origins, so a claim's state and its origins
 * change in one transaction. The database keeps one verified holder per name
 * (`domains_one_verified_holder`): a second verification loses with DomainTakenError.
 */
export class ApplicationDomains {
  constructor(private readonly platform: PlatformInfrastructure) {}

  list(applicationId: ApplicationId): Promise<DomainRow[]> {
    return this.platform.prisma.domain.findMany({ where: { applicationId }, orderBy: { hostname: 'asc' }, select: VIEW });
  }

  find(applicationId: ApplicationId, id: string): Promise<DomainRow | null> {
    return this.platform.prisma.domain.findFirst({ where: { id, applicationId }, select: VIEW });
  }

  /** The verified claim of `hostname` by another application than `applicationId`, if any. */
  async verifiedElsewhere(
    applicationId: ApplicationId,
    hostname: string,
  ): Promise<{ id: string; applicationId: ApplicationId; verificationToken: string } | null> {
    const row = await this.platform.prisma.domain.findFirst({
      where: { hostname, verifiedAt: { not: null }, applicationId: { not: applicationId } },
      select: { id: true, applicationId: true, verificationToken: true },
    });
    return row ? { ...row, applicationId: asApplicationId(row.applicationId) } : null;
  }

  /** A new, unverified claim: it routes nowhere and is trusted nowhere. */
  async add(applicationId: ApplicationId, hostname: string, verificationToken: string): Promise<DomainRow> {
    try {
      return await this.platform.prisma.domain.create({ data: { applicationId, hostname, verificationToken }, select: VIEW });
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
      return await this.platform.prisma.$transaction(async (tx) => {
        if (displace) await unverifyIn(tx, displace.id, displace.reason);
        const now = new Date();
        const { count } = await tx.domain.updateMany({
          where: { id: claim.id },
          data: { verifiedAt: claim.verifiedAt ?? now, checkedAt: now, checkError: null, checkFailures: 0 },
        });
        if (count === 0) throw new DomainGoneError();
        await tx.trustedOrigin.createMany({
          data: origins.map((origin) => ({ applicationId: claim.applicationId, origin, source: 'custom_domain' as const, domainId: claim.id })),
          skipDuplicates: true,
        });
        return tx.domain.findUniqueOrThrow({ where: { id: claim.id }, select: VIEW });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new DomainTakenError();
      throw error;
    }
  }

  /** A failed check: recorded; `unverify` also takes the name and its origins away from the claim. */
  async markFailed(id: string, reason: string, unverify: boolean): Promise<void> {
    await this.platform.prisma.$transaction(async (tx) => {
      if (unverify) await unverifyIn(tx, id, reason);
      else await tx.domain.updateMany({ where: { id }, data: { checkedAt: new Date(), checkError: reason } });
    });
  }

  /** Removes the claim and (in the same transaction) the origins it produced. */
  async remove(applicationId: ApplicationId, id: string): Promise<boolean> {
    return this.platform.prisma.$transaction(async (tx) => {
      await tx.trustedOrigin.deleteMany({ where: { applicationId, domainId: id, source: 'custom_domain' } });
      const { count } = await tx.domain.deleteMany({ where: { id, applicationId } });
      return count > 0;
    });
  }

  /**
   * Verified claims not checked for `intervalMs`, at most `limit`, marked checked now in the same
   * statement (`FOR UPDATE SKIP LOCKED`): gateway replicas never check one claim twice at once.
   */
  async claimDueForRecheck(intervalMs: number, limit: number): Promise<DueDomainClaim[]> {
    const rows = await this.platform.prisma.$queryRaw<
      { id: string; application_id: string; hostname: string; verification_token: string; check_failures: number }[]
    >`
      UPDATE domains SET checked_at = now()
       WHERE id IN (SELECT id FROM domains
                     WHERE verified_at IS NOT NULL AND (checked_at IS NULL OR checked_at <= now() - make_interval(secs => ${intervalMs / 1000}))
                     ORDER BY checked_at NULLS FIRST LIMIT ${limit} FOR UPDATE SKIP LOCKED)
         AND verified_at IS NOT NULL
      RETURNING id, application_id, hostname, verification_token, check_failures`;
    return rows.map((r) => ({
      id: r.id,
      applicationId: asApplicationId(r.application_id),
      hostname: r.hostname,
      verificationToken: r.verification_token,
      checkFailures: r.check_failures,
    }));
  }

  /** A periodic re-check found the record: the count of failures in a row starts again. */
  async recheckPassed(id: string): Promise<void> {
    await this.platform.prisma.domain.updateMany({
      where: { id, verifiedAt: { not: null } },
      data: { checkedAt: new Date(), checkError: null, checkFailures: 0 },
    });
  }

  /**
   * A periodic re-check did not find the record. `lapse`: that was the last failure allowed, the
   * claim loses the name and its origins (one transaction). Returns whether it was still verified.
   */
  async recheckFailed(id: string, reason: string, countsAsFailure: boolean, lapse: boolean): Promise<boolean> {
    return this.platform.prisma.$transaction(async (tx) => {
      const still = await tx.domain.findFirst({ where: { id, verifiedAt: { not: null } }, select: { id: true } });
      if (!still) return false;
      if (lapse) await unverifyIn(tx, id, reason);
      else
        await tx.domain.updateMany({
          where: { id },
          data: { checkedAt: new Date(), checkError: reason, ...(countsAsFailure ? { checkFailures: { increment: 1 } } : {}) },
        });
      return true;
    });
  }
}

async function unverifyIn(tx: Prisma.TransactionClient, id: string, reason: string): Promise<void> {
  await tx.trustedOrigin.deleteMany({ where: { domainId: id, source: 'custom_domain' } });
  await tx.domain.updateMany({ where: { id }, data: { verifiedAt: null, checkedAt: new Date(), checkError: reason, checkFailures: 0 } });
}
