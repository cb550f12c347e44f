import { Injectable } from '@nestjs/common';
import { Prisma } from '@slipway/platform-schema';
import { asApplicationId, type ApplicationId, type OwnerId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { ApplicationDatabases } from './databases.js';
import { ApplicationDomains } from './domains.js';
import { Previews } from './previews.js';
import { TrustedOrigins } from './trusted-origins.js';

export { DomainGoneError, DomainTakenError, type ApplicationDomains, type DomainRow, type DueDomainClaim } from './domains.js';
export type { ApplicationDatabaseRow, ApplicationDatabases, NewApplicationDatabase } from './databases.js';
export { PREVIEW_NAME_PATTERN, PreviewNameTakenError, Previews, TooManyPreviewsError, previewSlug, type PreviewRow, type RemovedPreview } from './previews.js';
export type { OriginSources, TrustedOriginEntry, TrustedOrigins } from './trusted-origins.js';

export class SlugTakenError extends Error {
  override readonly name = 'SlugTakenError';
}

/** An application as an owner-scoped route sees it, its id now known to be the owner's. */
export interface OwnedApplicationRow {
  id: ApplicationId;
  name: string;
  slug: string;
}

const SUMMARY = { id: true, name: true, slug: true } as const;

/**
 * Applications, with their custom domains (`domains`), trusted origins (`trustedOrigins`) and
 * application databases (`databases`): one aggregate, one file per part.
 * Every query of the platform database on these tables lives here (ARCHITECTURE.md, "Data").
 */
@Injectable()
export class ApplicationsRepository {
  readonly domains: ApplicationDomains;
  readonly trustedOrigins: TrustedOrigins;
  readonly databases: ApplicationDatabases;
  readonly previews: Previews;

  constructor(private readonly platform: PlatformInfrastructure) {
    this.previews = new Previews(platform);
    this.domains = new ApplicationDomains(platform);
    this.trustedOrigins = new TrustedOrigins(platform);
    this.databases = new ApplicationDatabases(platform);
  }

  /**
   * The one query every owner-scoped dashboard route runs first: is `applicationId` this owner's?
   * A preview is not addressed by its own id: it is reached under its parent (`…/previews`).
   */
  async findOwned(ownerId: OwnerId, applicationId: string): Promise<OwnedApplicationRow | null> {
    const row = await this.platform.prisma.application.findFirst({ where: { id: applicationId, ownerId, parentId: null }, select: SUMMARY });
    return row ? { ...row, id: asApplicationId(row.id) } : null;
  }

  listOwned(ownerId: OwnerId) {
    return this.platform.prisma.application.findMany({
      where: { ownerId, parentId: null },
      orderBy: { createdAt: 'desc' },
      select: {
        ...SUMMARY,
        createdAt: true,
        deployments: { orderBy: { createdAt: 'desc' }, take: 1, select: { id: true, status: true, createdAt: true } },
      },
    });
  }

  /** Slugs already taken among `candidates` (by anyone: slugs are global addresses). */
  async takenSlugs(candidates: string[]): Promise<Set<string>> {
    const rows = await this.platform.prisma.application.findMany({ where: { slug: { in: candidates } }, select: { slug: true } });
    return new Set(rows.map((r) => r.slug));
  }

  /** Throws SlugTakenError when another application took `slug` first (the unique index decides). */
  async create(ownerId: OwnerId, name: string, slug: string): Promise<OwnedApplicationRow & { createdAt: Date }> {
    try {
      const row = await this.platform.prisma.application.create({ data: { ownerId, name, slug }, select: { ...SUMMARY, createdAt: true } });
      return { ...row, id: asApplicationId(row.id) };
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new SlugTakenError();
      throw error;
    }
  }

  details(ownerId: OwnerId, applicationId: ApplicationId) {
    return this.platform.prisma.application.findFirst({
      where: { id: applicationId, ownerId, parentId: null },
      select: { ...SUMMARY, createdAt: true, liveReleaseId: true, signInService: { select: { id: true } }, database: { select: { databaseName: true } } },
    });
  }
}
