import type { ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { SecretsRepository, type SecretEnvelope, type SecretEnvironment } from '../secrets/secrets.repository.js';

/** An application's sealed values, as stored: envelopes the caller opens with the keyring. */
export interface ApplicationEnvelopes {
  /**
   * Whose envelopes these are (the application's own id, or a preview's parent's): what each one
   * is bound to (`envelopeBinding.*(sealedFor, …)`), and the application whose sign-in service and
   * database the release uses.
   */
  sealedFor: ApplicationId;
  /** The slug of `sealedFor`: the sign-in service's address is named by it. */
  slug: string;
  /** `production`, or `preview` for a preview (its secrets are the parent's `preview` scope). */
  environment: SecretEnvironment;
  /** Each name once: the environment's own value where it has one, else the `all` one. */
  secrets: SecretEnvelope[];
  /** The sign-in service's cookie secret; null: sign-in is off. */
  cookieSecret: Buffer | null;
  database: { databaseName: string; roleName: string; password: Buffer } | null;
}

/**
 * What a deployment's build and a running release are given of their application: its secrets,
 * its sign-in cookie secret and its database's credentials. Envelopes in, envelopes out: opening
 * them is the caller's (ApplicationSecrets in the worker, appEnvironment in the edge).
 */
export class ApplicationInputs {
  private readonly secrets: SecretsRepository;

  constructor(private readonly platform: PlatformInfrastructure) {
    this.secrets = new SecretsRepository(platform);
  }

  /** For the build worker; throws when the application is gone (the deployment then fails). */
  async forBuild(applicationId: ApplicationId): Promise<ApplicationEnvelopes> {
    const envelopes = await this.forRuntime(applicationId);
    if (!envelopes) throw new Error(`application ${applicationId} no longer exists`);
    return envelopes;
  }

  /**
   * For the edge, starting a Node release (side by side; the secrets as SecretsRepository reads
   * them). A preview gets its parent's values: the parent's sign-in service and database, and
   * the parent's secrets of the `preview` scope. Null: the application no longer exists.
   */
  async forRuntime(applicationId: ApplicationId): Promise<ApplicationEnvelopes | null> {
    const { rows } = await this.platform.pool.query<{ id: string; slug: string; preview: boolean }>(
      `SELECT coalesce(p.id, a.id) AS id, coalesce(p.slug, a.slug) AS slug, a.parent_id IS NOT NULL AS preview
         FROM applications a LEFT JOIN applications p ON p.id = a.parent_id WHERE a.id = $1::uuid`,
      [applicationId],
    );
    const app = rows[0];
    if (!app) return null;
    const sealedFor = app.id as ApplicationId;
    const environment: SecretEnvironment = app.preview ? 'preview' : 'production';
    const [secrets, signIn, database] = await Promise.all([
      this.secrets.envelopes(sealedFor, environment),
      this.platform.pool.query<{ cookie_secret: Buffer }>('SELECT cookie_secret FROM sign_in_services WHERE application_id = $1::uuid', [sealedFor]),
      this.platform.pool.query<{ database_name: string; role_name: string; password: Buffer }>(
        'SELECT database_name, role_name, password FROM application_databases WHERE application_id = $1::uuid',
        [sealedFor],
      ),
    ]);
    const db = database.rows[0];
    return {
      sealedFor,
      slug: app.slug,
      environment,
      secrets,
      cookieSecret: signIn.rows[0]?.cookie_secret ?? null,
      database: db ? { databaseName: db.database_name, roleName: db.role_name, password: db.password } : null,
    };
  }
}
