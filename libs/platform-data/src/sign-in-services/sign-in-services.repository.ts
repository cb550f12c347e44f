import { Injectable } from '@nestjs/common';
import type { ApplicationId, OwnerId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { withAdvisoryLock } from './advisory-lock.js';

const SERVICE_SELECT = { cookieSecret: true, settings: true, createdAt: true } as const;
const DATABASE_SELECT = { databaseName: true, roleName: true, password: true } as const;

/**
 * Applications' sign-in services (cookie secret, settings), with what switching one on and
 * serving it read of the application around it.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class SignInServicesRepository {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /**
   * The application as the platform's sign-in calls see it: owner and plan, whether it has a
   * database, its service, and which of `projectOwnedNames` the project set as its own secrets.
   */
  findApplication(applicationId: ApplicationId, projectOwnedNames: readonly string[]) {
    return this.platform.prisma.application.findUnique({
      where: { id: applicationId },
      select: {
        id: true,
        slug: true,
        ownerId: true,
        allowLocalhost: true,
        owner: { select: { plan: true } },
        database: { select: { id: true } },
        signInService: { select: SERVICE_SELECT },
        secrets: { where: { name: { in: [...projectOwnedNames] } }, select: { name: true } },
      },
    });
  }

  /** Sign-in services of the given applications (all of an owner's, or one). */
  listServices(scope: { ownerId: OwnerId } | { applicationId: ApplicationId }) {
    return this.platform.prisma.application.findMany({
      where: { ...('ownerId' in scope ? { ownerId: scope.ownerId } : { id: scope.applicationId }), signInService: { isNot: null } },
      select: { id: true, slug: true, allowLocalhost: true, signInService: { select: SERVICE_SELECT } },
      orderBy: { createdAt: 'asc' },
    });
  }

  findSettings(applicationId: ApplicationId) {
    return this.platform.prisma.signInService.findUnique({ where: { applicationId }, select: { settings: true } });
  }

  /** The service's settings and (when given) the application's `allowLocalhost`, in one transaction. */
  async updateSettings(applicationId: ApplicationId, settings: object, allowLocalhost: boolean | undefined): Promise<void> {
    const prisma = this.platform.prisma;
    await prisma.$transaction([
      prisma.signInService.update({ where: { applicationId }, data: { settings } }),
      ...(allowLocalhost === undefined ? [] : [prisma.application.update({ where: { id: applicationId }, data: { allowLocalhost } })]),
    ]);
  }

  /** What provisioning reads: the owner, slug, database, whether a service exists, and domain claims. */
  findForProvisioning(applicationId: ApplicationId) {
    return this.platform.prisma.application.findUnique({
      where: { id: applicationId },
      select: {
        slug: true,
        ownerId: true,
        database: { select: DATABASE_SELECT },
        signInService: { select: { id: true } },
        domains: { select: { id: true, hostname: true, verifiedAt: true } },
      },
    });
  }

  /** The service, with its cookie secret as an envelope bound to the application. */
  async create(applicationId: ApplicationId, cookieSecret: Uint8Array): Promise<void> {
    await this.platform.prisma.signInService.create({ data: { applicationId, cookieSecret: Buffer.from(cookieSecret) } });
  }

  /** The tenant of `/a/{slug}` as the sign-in service resolves it (envelopes still sealed). */
  findTenantBySlug(slug: string) {
    return this.platform.prisma.application.findUnique({
      where: { slug },
      select: {
        id: true,
        slug: true,
        allowLocalhost: true,
        database: { select: DATABASE_SELECT },
        signInService: { select: { cookieSecret: true, settings: true } },
        trustedOrigins: { select: { origin: true } },
      },
    });
  }

  /** What decides the variables a deploy receives: service, database, and which of `projectOwnedNames` the project set. */
  findInjectionFacts(applicationId: ApplicationId, projectOwnedNames: readonly string[]) {
    return this.platform.prisma.application.findUnique({
      where: { id: applicationId },
      select: {
        slug: true,
        signInService: { select: { cookieSecret: true } },
        database: { select: DATABASE_SELECT },
        secrets: { where: { name: { in: [...projectOwnedNames] } }, select: { name: true } },
      },
    });
  }

  /**
   * Runs `fn` while holding an advisory lock on the owner, so two applications of one owner
   * switched on at once cannot both pass the plan's database allowance.
   */
  withOwnerDatabasesLock<T>(ownerId: OwnerId, fn: () => Promise<T>): Promise<T> {
    return withAdvisoryLock(this.platform, 'slipway-owner-databases:', ownerId, fn);
  }

  /** Serialises provisioning of one application (concurrent switch-ons make one service). */
  withProvisioningLock<T>(applicationId: ApplicationId, fn: () => Promise<T>): Promise<T> {
    return withAdvisoryLock(this.platform, 'slipway-provision-sign-in:', applicationId, fn);
  }
}
