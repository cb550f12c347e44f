import { Inject, Injectable } from '@nestjs/common';
import { PROJECT_OWNED_SIGN_IN_VARIABLES } from '@slipway/auth-core';
import pg from 'pg';
import { PrismaService } from '../common/prisma.service.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

const SERVICE_SELECT = { cookieSecret: true, settings: true, createdAt: true } as const;

@Injectable()
export class SignInRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  findApplication(applicationId: string) {
    return this.prisma.client.application.findUnique({
      where: { id: applicationId },
      select: {
        id: true,
        slug: true,
        ownerId: true,
        allowLocalhost: true,
        owner: { select: { plan: true } },
        database: { select: { id: true } },
        signInService: { select: SERVICE_SELECT },
        secrets: { where: { name: { in: [...PROJECT_OWNED_SIGN_IN_VARIABLES] } }, select: { name: true } },
      },
    });
  }

  /** Sign-in services of the given applications (all of an owner's, or one). */
  listServices(where: { ownerId: string } | { applicationId: string }) {
    return this.prisma.client.application.findMany({
      where: { ...('ownerId' in where ? { ownerId: where.ownerId } : { id: where.applicationId }), signInService: { isNot: null } },
      select: { id: true, slug: true, allowLocalhost: true, signInService: { select: SERVICE_SELECT } },
      orderBy: { createdAt: 'asc' },
    });
  }

  async origins(applicationId: string): Promise<string[]> {
    const rows = await this.prisma.client.trustedOrigin.findMany({ where: { applicationId }, select: { origin: true }, orderBy: { origin: 'asc' } });
    return rows.map((r) => r.origin);
  }

  originsOf(applicationIds: string[]) {
    return this.prisma.client.trustedOrigin.findMany({ where: { applicationId: { in: applicationIds } }, select: { applicationId: true, origin: true }, orderBy: { origin: 'asc' } });
  }

  countOwnerDatabases(ownerId: string): Promise<number> {
    return this.prisma.client.applicationDatabase.count({ where: { ownerId } });
  }

  /**
   * Runs `fn` while holding an advisory lock on the owner, so two applications of one owner
   * switched on at once cannot both pass the plan's database allowance.
   */
  async withOwnerLock<T>(ownerId: string, fn: () => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.config.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`SELECT pg_advisory_lock(hashtext('slipway-owner-databases:' || $1::text))`, [ownerId]);
      return await fn();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtext('slipway-owner-databases:' || $1::text))`, [ownerId]).catch(() => undefined);
      await client.end();
    }
  }
}
