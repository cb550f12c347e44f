import { Prisma } from '@slipway/platform-schema';
import { asApplicationId, type ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

import { PREVIEW_NAME_PATTERN } from '@slipway/contract';

export { PREVIEW_NAME_PATTERN };

/** The address label of a preview: `{parent slug}--{name}`. */
export const previewSlug = (parentSlug: string, name: string): string => `${parentSlug}--${name}`;

export class PreviewNameTakenError extends Error {
  override readonly name = 'PreviewNameTakenError';
}

export class TooManyPreviewsError extends Error {
  override readonly name = 'TooManyPreviewsError';
  constructor(readonly limit: number) {
    super(`at most ${limit} previews`);
  }
}

export interface PreviewRow {
  id: ApplicationId;
  name: string;
  slug: string;
  expiresAt: Date;
  createdAt: Date;
  liveReleaseId: string | null;
}

/** What a removed preview left in blob storage: its sources and artifacts, for the caller to delete. */
export interface RemovedPreview {
  id: ApplicationId;
  parentId: ApplicationId;
  slug: string;
  blobKeys: string[];
}

const ROW = { id: true, previewName: true, slug: true, expiresAt: true, createdAt: true, liveReleaseId: true } as const;
const toRow = (r: {
  id: string;
  previewName: string | null;
  slug: string;
  expiresAt: Date | null;
  createdAt: Date;
  liveReleaseId: string | null;
}): PreviewRow => ({
  id: asApplicationId(r.id),
  name: r.previewName!,
  slug: r.slug,
  expiresAt: r.expiresAt!,
  createdAt: r.createdAt,
  liveReleaseId: r.liveReleaseId,
});

/**
 * Previews: applications of their own (deployments, releases, runtime, address), each made under
 * a parent application by its owner and removed with it or when it expires. A deploy to a
 * preview (re)sets its expiry. Every query of the platform database on previews lives here.
 */
export class Previews {
  constructor(private readonly platform: PlatformInfrastructure) {}

  list(parentId: ApplicationId): Promise<PreviewRow[]> {
    return this.platform.prisma.application.findMany({ where: { parentId }, orderBy: { createdAt: 'desc' }, select: ROW }).then((rows) => rows.map(toRow));
  }

  async find(parentId: ApplicationId, name: string): Promise<PreviewRow | null> {
    const row = await this.platform.prisma.application.findFirst({ where: { parentId, previewName: name }, select: ROW });
    return row ? toRow(row) : null;
  }

  /** Whether `applicationId` is a preview of `parentId` (its deployments and releases are the parent's to see). */
  async isPreviewOf(parentId: ApplicationId, applicationId: string): Promise<boolean> {
    return (await this.platform.prisma.application.count({ where: { id: applicationId, parentId } })) === 1;
  }

  /**
   * The preview `name` of `parentId`, made if it does not exist (at most `perOwner` previews for
   * the parent's owner, all applications counted), its expiry set to `ttlMs` from now either way.
   * Throws PreviewNameTakenError when its address is another application's slug.
   */
  async ensure(parentId: ApplicationId, name: string, ttlMs: number, perOwner: number): Promise<PreviewRow> {
    const expiresAt = new Date(Date.now() + ttlMs);
    try {
      return await this.platform.prisma.$transaction(async (tx) => {
        const parent = await tx.application.findUniqueOrThrow({ where: { id: parentId }, select: { ownerId: true, slug: true, name: true } });
        // One owner's previews are counted under a lock of that owner: two deploys never both take the last one.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('slipway:previews:' || ${parent.ownerId}))`;
        const existing = await tx.application.findFirst({ where: { parentId, previewName: name }, select: { id: true } });
        if (existing) return toRow(await tx.application.update({ where: { id: existing.id }, data: { expiresAt }, select: ROW }));
        const count = await tx.application.count({ where: { ownerId: parent.ownerId, parentId: { not: null } } });
        if (count >= perOwner) throw new TooManyPreviewsError(perOwner);
        const created = await tx.application.create({
          data: {
            ownerId: parent.ownerId,
            parentId,
            previewName: name,
            name: `${parent.name} (preview ${name})`,
            slug: previewSlug(parent.slug, name),
            expiresAt,
          },
          select: ROW,
        });
        return toRow(created);
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new PreviewNameTakenError();
      throw error;
    }
  }

  /** Previews past their expiry with no deployment in progress (those go when it ends). */
  async expired(now = new Date(), limit = 50): Promise<{ id: ApplicationId; parentId: ApplicationId }[]> {
    const { rows } = await this.platform.pool.query<{ id: string; parent_id: string }>(
      `SELECT a.id, a.parent_id FROM applications a
        WHERE a.parent_id IS NOT NULL AND a.expires_at <= $1
          AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.application_id = a.id AND d.status IN ('queued', 'building', 'releasing'))
        ORDER BY a.expires_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ id: asApplicationId(r.id), parentId: asApplicationId(r.parent_id) }));
  }

  /**
   * Deletes the preview (its deployments, releases and origins go with it) unless a deployment of
   * it is in progress (`in_progress`). Answers what it stored, for the caller to delete from blob
   * storage once the row is gone.
   */
  async remove(parentId: ApplicationId, previewId: ApplicationId): Promise<RemovedPreview | 'not_found' | 'in_progress'> {
    return this.platform.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        { slug: string }[]
      >`SELECT slug FROM applications WHERE id = ${previewId}::uuid AND parent_id = ${parentId}::uuid FOR UPDATE`;
      if (!rows[0]) return 'not_found' as const;
      const active = await tx.deployment.count({ where: { applicationId: previewId, status: { in: ['queued', 'building', 'releasing'] } } });
      if (active) return 'in_progress' as const;
      const sources = await tx.deployment.findMany({ where: { applicationId: previewId, sourceKey: { not: null } }, select: { sourceKey: true } });
      const artifacts = await tx.release.findMany({ where: { applicationId: previewId }, select: { artifactKey: true } });
      await tx.application.delete({ where: { id: previewId } });
      return { id: previewId, parentId, slug: rows[0].slug, blobKeys: [...sources.map((s) => s.sourceKey!), ...artifacts.map((a) => a.artifactKey)] };
    });
  }
}
