import type { ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

/** An origin the sign-in service trusts for an application, and why (libs/sign-in-core decides which). */
export interface TrustedOriginEntry {
  origin: string;
  source: 'app' | 'publishing_domain' | 'custom_domain' | 'preview';
  domainId?: string;
}

/** What an application's derived origins are computed from: its slug, its domain claims and its previews. */
export interface OriginSources {
  slug: string;
  domains: { id: string; hostname: string; verifiedAt: Date | null }[];
  previews: { slug: string }[];
}

const toRows = (applicationId: ApplicationId, entries: TrustedOriginEntry[]) =>
  entries.map((e) => ({ applicationId, origin: e.origin, source: e.source, domainId: e.domainId ?? null }));

/** trusted_origins: read by the sign-in service, written on switch-on, on every deploy and by domain claims. */
export class TrustedOrigins {
  constructor(private readonly platform: PlatformInfrastructure) {}

  async list(applicationId: ApplicationId): Promise<string[]> {
    const rows = await this.platform.prisma.trustedOrigin.findMany({ where: { applicationId }, select: { origin: true }, orderBy: { origin: 'asc' } });
    return rows.map((r) => r.origin);
  }

  /** The origins of several applications at once (a listing of sign-in services). */
  listOf(applicationIds: ApplicationId[]): Promise<{ applicationId: string; origin: string }[]> {
    return this.platform.prisma.trustedOrigin.findMany({
      where: { applicationId: { in: applicationIds } },
      select: { applicationId: true, origin: true },
      orderBy: { origin: 'asc' },
    });
  }

  /** Adds origins, keeping those already registered. */
  async add(applicationId: ApplicationId, entries: TrustedOriginEntry[]): Promise<void> {
    await this.platform.prisma.trustedOrigin.createMany({ data: toRows(applicationId, entries), skipDuplicates: true });
  }

  /** The slug and domain claims of the application, or null when it does not exist. */
  sources(applicationId: ApplicationId): Promise<OriginSources | null> {
    return this.platform.prisma.application.findUnique({
      where: { id: applicationId },
      select: { slug: true, domains: { select: { id: true, hostname: true, verifiedAt: true } }, previews: { select: { slug: true } } },
    });
  }

  /**
   * Makes the derived origins (`app`, `publishing_domain`, `preview`) exactly `entries`, drops `custom_domain`
   * origins whose claim is not (or no longer) verified, and adds `entries`, in one transaction;
   * `manual` origins are left alone. Returns every origin of the application afterwards.
   */
  async replaceDerived(applicationId: ApplicationId, entries: TrustedOriginEntry[]): Promise<string[]> {
    const prisma = this.platform.prisma;
    await prisma.$transaction([
      prisma.trustedOrigin.deleteMany({
        where: { applicationId, source: { in: ['app', 'publishing_domain', 'preview'] }, origin: { notIn: entries.map((e) => e.origin) } },
      }),
      prisma.trustedOrigin.deleteMany({
        where: { applicationId, source: 'custom_domain', OR: [{ domainId: null }, { domain: { is: { verifiedAt: null } } }] },
      }),
      prisma.trustedOrigin.createMany({ data: toRows(applicationId, entries), skipDuplicates: true }),
    ]);
    return this.list(applicationId);
  }
}
