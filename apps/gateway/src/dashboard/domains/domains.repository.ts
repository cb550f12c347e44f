import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/db';
import { PrismaService } from '../../common/prisma.service.js';

export class DomainTakenError extends Error {
  override readonly name = 'DomainTakenError';
}

const VIEW = { id: true, hostname: true, createdAt: true, origins: { select: { origin: true }, orderBy: { origin: 'asc' } } } as const;

/**
 * Custom domains and the trusted origins they produce (source `custom_domain`): the sign-in
 * service reads trusted_origins, so a domain and its origins are written in one transaction.
 */
@Injectable()
export class DomainsRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(applicationId: string) {
    return this.prisma.client.domain.findMany({ where: { applicationId }, orderBy: { hostname: 'asc' }, select: VIEW });
  }

  async add(applicationId: string, hostname: string, origins: string[]) {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        const domain = await tx.domain.create({ data: { applicationId, hostname }, select: { id: true } });
        await tx.trustedOrigin.createMany({ data: origins.map((origin) => ({ applicationId, origin, source: 'custom_domain' as const, domainId: domain.id })), skipDuplicates: true });
        return tx.domain.findUniqueOrThrow({ where: { id: domain.id }, select: VIEW });
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new DomainTakenError();
      throw error;
    }
  }

  /** Removes the domain and (in the same transaction) the origins it produced. */
  async remove(applicationId: string, id: string): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      await tx.trustedOrigin.deleteMany({ where: { applicationId, domainId: id, source: 'custom_domain' } });
      const { count } = await tx.domain.deleteMany({ where: { id, applicationId } });
      return count > 0;
    });
  }
}
