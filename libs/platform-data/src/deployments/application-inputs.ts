import type { ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { SecretsRepository } from '../secrets/secrets.repository.js';

/** An application's sealed values, as stored: envelopes the caller opens with the keyring. */
export interface ApplicationEnvelopes {
  secrets: { name: string; value: Buffer }[];
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

  /** For the build worker: also the slug; throws when the application is gone (the deployment then fails). */
  async forBuild(applicationId: ApplicationId): Promise<ApplicationEnvelopes & { slug: string }> {
    const [app, envelopes] = await Promise.all([
      this.platform.pool.query<{ slug: string }>('SELECT slug FROM applications WHERE id = $1::uuid', [applicationId]),
      this.forRuntime(applicationId),
    ]);
    if (!app.rows[0]) throw new Error(`application ${applicationId} no longer exists`);
    return { slug: app.rows[0].slug, ...envelopes };
  }

  /** For the edge, starting a Node release (side by side; the secrets as SecretsRepository reads them). */
  async forRuntime(applicationId: ApplicationId): Promise<ApplicationEnvelopes> {
    const [secrets, signIn, database] = await Promise.all([
      this.secrets.envelopes(applicationId),
      this.platform.pool.query<{ cookie_secret: Buffer }>('SELECT cookie_secret FROM sign_in_services WHERE application_id = $1::uuid', [applicationId]),
      this.platform.pool.query<{ database_name: string; role_name: string; password: Buffer }>('SELECT database_name, role_name, password FROM application_databases WHERE application_id = $1::uuid', [applicationId]),
    ]);
    const db = database.rows[0];
    return {
      secrets,
      cookieSecret: signIn.rows[0]?.cookie_secret ?? null,
      database: db ? { databaseName: db.database_name, roleName: db.role_name, password: db.password } : null,
    };
  }
}
