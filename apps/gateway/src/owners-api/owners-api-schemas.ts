import { z } from 'zod';

/** The schemas of the owners' API that its OpenAPI document shows (releases, rollback, promote). */
export const Release = z
  .object({
    id: z.uuid(),
    deploymentId: z.uuid().describe('The deployment (task) that built it.'),
    kind: z.enum(['static', 'node']),
    createdAt: z.iso.datetime(),
    sizeBytes: z.number().int().describe("Bytes of the release's artifact, counted against the storage quota."),
    deploymentStatus: z.enum(['queued', 'building', 'releasing', 'succeeded', 'failed']),
    live: z.boolean().describe("The release the application's address serves (a preview's release never is)."),
    preview: z
      .string()
      .nullable()
      .describe(
        "The preview that built it (served at `{slug}--{preview}`); null: one of the application's own. Promote and rollback take the application's own releases only.",
      ),
  })
  .meta({ title: 'Release' });

export const Releases = z.object({ releases: z.array(Release).describe('Newest first (at most 50).') }).meta({ title: 'Releases' });

export const ReleaseSwitch = z
  .object({
    liveReleaseId: z.uuid(),
    previousReleaseId: z.uuid().nullable().describe('The release live before the call (the same as liveReleaseId when nothing changed).'),
    releases: z.array(Release),
  })
  .meta({ title: 'ReleaseSwitch' });

export const RollbackRequest = z
  .strictObject({ releaseId: z.uuid().optional().describe('Default: the newest release of a succeeded deployment older than the live one.') })
  .meta({ title: 'RollbackRequest' });
