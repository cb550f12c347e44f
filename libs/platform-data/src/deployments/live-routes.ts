import type { ApplicationId, ReleaseId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

export interface LiveRelease {
  id: string;
  kind: 'static' | 'node';
  artifactKey: string;
  spec: { spaFallback?: boolean; commands?: { start?: string | null }; kind?: string } & Record<string, unknown>;
}

/** One application as the edge routes to it. */
export interface LiveRoute {
  applicationId: string;
  slug: string;
  hostnames: string[];
  release: LiveRelease | null;
}

/** An application's route with one of its releases in it, live or not (`LiveRoutes.routeTo`). */
export type RouteTo = LiveRoute & { release: LiveRelease };

interface RouteRow {
  id: string;
  slug: string;
  hostnames: string[] | null;
  release_id: string | null;
  kind: string | null;
  artifact_key: string | null;
  spec: LiveRelease['spec'] | null;
}

/** The application's VERIFIED custom domains, lower case (`a` is the application's alias). */
const VERIFIED_HOSTNAMES = `(SELECT array_agg(lower(d.hostname)) FROM domains d WHERE d.application_id = a.id AND d.verified_at IS NOT NULL) AS hostnames`;

function routeOf(row: RouteRow): LiveRoute {
  return {
    applicationId: row.id,
    slug: row.slug,
    hostnames: row.hostnames ?? [],
    release: row.release_id
      ? { id: row.release_id, kind: row.kind === 'node' ? 'node' : 'static', artifactKey: row.artifact_key!, spec: row.spec ?? {} }
      : null,
  };
}

/**
 * The edge's read model: routes (slug, VERIFIED custom domains, live release) and single
 * releases. A claimed but unverified domain never routes: its TXT record has not proved control.
 * Plain pool queries (no Prisma): the edge reloads every route at start and on each routes message.
 */
export class LiveRoutes {
  constructor(private readonly platform: PlatformInfrastructure) {}

  /** One application's route (none: it no longer exists), or, without an id, every application's. */
  async routes(applicationId?: ApplicationId): Promise<LiveRoute[]> {
    const { rows } = await this.platform.pool.query<RouteRow>(
      `SELECT a.id, a.slug, r.id AS release_id, r.kind, r.artifact_key, r.spec, ${VERIFIED_HOSTNAMES}
         FROM applications a LEFT JOIN releases r ON r.id = a.live_release_id
        WHERE ($1::uuid IS NULL OR a.id = $1::uuid)`,
      [applicationId ?? null],
    );
    return rows.map(routeOf);
  }

  /**
   * The route of the release's application as it is with this release in it, live or not (the
   * worker hands a new one to the edge before it is live): what the edge starts and switches to,
   * in one read. Null: no such release.
   */
  async routeTo(releaseId: ReleaseId): Promise<RouteTo | null> {
    const { rows } = await this.platform.pool.query<RouteRow>(
      `SELECT a.id, a.slug, r.id AS release_id, r.kind, r.artifact_key, r.spec, ${VERIFIED_HOSTNAMES}
         FROM releases r JOIN applications a ON a.id = r.application_id
        WHERE r.id = $1::uuid`,
      [releaseId],
    );
    const row = rows[0];
    return row ? (routeOf(row) as RouteTo) : null;
  }

  /** Any release, live or not, with its application (what a pod of the kubernetes driver downloads). */
  async release(releaseId: ReleaseId): Promise<(LiveRelease & { applicationId: string; slug: string }) | null> {
    const { rows } = await this.platform.pool.query<{
      id: string;
      kind: string;
      artifact_key: string;
      spec: LiveRelease['spec'];
      application_id: string;
      slug: string;
    }>(
      `SELECT r.id, r.kind, r.artifact_key, r.spec, r.application_id, a.slug FROM releases r JOIN applications a ON a.id = r.application_id WHERE r.id = $1::uuid`,
      [releaseId],
    );
    const row = rows[0];
    return row
      ? {
          id: row.id,
          kind: row.kind === 'node' ? 'node' : 'static',
          artifactKey: row.artifact_key,
          spec: row.spec,
          applicationId: row.application_id,
          slug: row.slug,
        }
      : null;
  }
}
