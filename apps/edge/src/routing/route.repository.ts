import pg from 'pg';

export interface LiveRelease {
  id: string;
  kind: 'static' | 'node';
  artifactKey: string;
  spec: { spaFallback?: boolean; commands?: { start?: string | null }; kind?: string } & Record<string, unknown>;
}

export interface AppRoute {
  applicationId: string;
  slug: string;
  hostnames: string[];
  release: LiveRelease | null;
}

export interface AppSecretsRow {
  secrets: { name: string; value: Buffer }[];
  cookieSecret: Buffer | null;
  database: { databaseName: string; roleName: string; password: Buffer } | null;
}

/**
 * Reads routes (slug, VERIFIED custom domains, live release) and what a Node release needs to
 * run. A claimed but unverified domain never routes: its TXT record has not proved control.
 */
export class RouteRepository {
  constructor(private readonly pool: pg.Pool) {}

  async routes(applicationId?: string): Promise<AppRoute[]> {
    const { rows } = await this.pool.query<{ id: string; slug: string; hostnames: string[] | null; release_id: string | null; kind: string | null; artifact_key: string | null; spec: LiveRelease['spec'] | null }>(
      `SELECT a.id, a.slug, r.id AS release_id, r.kind, r.artifact_key, r.spec,
              (SELECT array_agg(lower(d.hostname)) FROM domains d WHERE d.application_id = a.id AND d.verified_at IS NOT NULL) AS hostnames
         FROM applications a LEFT JOIN releases r ON r.id = a.live_release_id
        WHERE ($1::uuid IS NULL OR a.id = $1::uuid)`,
      [applicationId ?? null],
    );
    return rows.map((row) => ({
      applicationId: row.id,
      slug: row.slug,
      hostnames: row.hostnames ?? [],
      release: row.release_id ? { id: row.release_id, kind: row.kind === 'node' ? 'node' : 'static', artifactKey: row.artifact_key!, spec: row.spec ?? {} } : null,
    }));
  }

  async release(releaseId: string): Promise<(LiveRelease & { applicationId: string; slug: string }) | null> {
    const { rows } = await this.pool.query(
      `SELECT r.id, r.kind, r.artifact_key, r.spec, r.application_id, a.slug FROM releases r JOIN applications a ON a.id = r.application_id WHERE r.id = $1::uuid`,
      [releaseId],
    );
    const row = rows[0];
    return row ? { id: row.id, kind: row.kind === 'node' ? 'node' : 'static', artifactKey: row.artifact_key, spec: row.spec, applicationId: row.application_id, slug: row.slug } : null;
  }

  async secrets(applicationId: string): Promise<AppSecretsRow> {
    const [secrets, signIn, database] = await Promise.all([
      this.pool.query<{ name: string; value: Buffer }>('SELECT name, value FROM secrets WHERE application_id = $1::uuid', [applicationId]),
      this.pool.query<{ cookie_secret: Buffer }>('SELECT cookie_secret FROM sign_in_services WHERE application_id = $1::uuid', [applicationId]),
      this.pool.query<{ database_name: string; role_name: string; password: Buffer }>('SELECT database_name, role_name, password FROM application_databases WHERE application_id = $1::uuid', [applicationId]),
    ]);
    const db = database.rows[0];
    return {
      secrets: secrets.rows,
      cookieSecret: signIn.rows[0]?.cookie_secret ?? null,
      database: db ? { databaseName: db.database_name, roleName: db.role_name, password: db.password } : null,
    };
  }
}
