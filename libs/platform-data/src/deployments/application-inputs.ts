import type { ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';

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
  constructor(private readonly platform: PlatformInfrastructure) {}

  /** For the build worker; throws when the application is gone (the deployment then fails). */
  async forBuild(applicationId: ApplicationId): Promise<ApplicationEnvelopes & { slug: string }> {
    const app = await this.platform.prisma.application.findUniqueOrThrow({
      where: { id: applicationId },
      select: { slug: true, secrets: { select: { name: true, value: true } }, signInService: { select: { cookieSecret: true } }, database: { select: { databaseName: true, roleName: true, password: true } } },
    });
    return {
      slug: app.slug,
      secrets: app.secrets.map((s) => ({ name: s.name, value: Buffer.from(s.value) })),
      cookieSecret: app.signInService ? Buffer.from(app.signInService.cookieSecret) : null,
      database: app.database ? { ...app.database, password: Buffer.from(app.database.password) } : null,
    };
  }

  /** For the edge, starting a Node release (plain pool queries, side by side). */
  async forRuntime(applicationId: ApplicationId): Promise<ApplicationEnvelopes> {
    const [secrets, signIn, database] = await Promise.all([
      this.platform.pool.query<{ name: string; value: Buffer }>('SELECT name, value FROM secrets WHERE application_id = $1::uuid', [applicationId]),
      this.platform.pool.query<{ cookie_secret: Buffer }>('SELECT cookie_secret FROM sign_in_services WHERE application_id = $1::uuid', [applicationId]),
      this.platform.pool.query<{ database_name: string; role_name: string; password: Buffer }>('SELECT database_name, role_name, password FROM application_databases WHERE application_id = $1::uuid', [applicationId]),
    ]);
    const db = database.rows[0];
    return {
      secrets: secrets.rows,
      cookieSecret: signIn.rows[0]?.cookie_secret ?? null,
      database: db ? { databaseName: db.database_name, roleName: db.role_name, password: db.password } : null,
    };
  }
}
