import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { decryptEnvelopeToString, encryptEnvelope, envelopeBinding, type Keyring } from '@slipway/crypto';
import { quoteIdent, withDatabase } from '@slipway/platform-schema';
import { asOwnerId, type ApplicationId, type PlatformData } from '@slipway/platform-data';
import { roleScramSecret } from './pooler/scram-secret.js';
import { insertSigningKey } from './signing-keys.js';
import { applicationDatabaseNames, migrateServiceAuth, tenantDatabaseUrl } from './tenant-database.js';
import { applicationOrigins } from './trusted-origins.js';

export interface ProvisionOptions {
  /** The platform database's repositories (also the advisory lock that serialises provisioning of one application). */
  platform: Pick<PlatformData, 'applications' | 'signInServices'>;
  keyring: Keyring;
  /** A role on the Postgres server for application databases that may create roles and databases. */
  adminDatabaseUrl: string;
  appsDomains: string[];
  appsScheme: string;
  applicationId: ApplicationId;
  /**
   * The role's `CONNECTION LIMIT` (APP_DATABASE_CONNECTION_LIMIT): every connection of the
   * application's role counts, through PgBouncer or the sign-in service's pool alike.
   */
  connectionLimit?: number;
}

/** Connections one application's role may hold on the server (its app through PgBouncer plus the sign-in service's pool). */
export const DEFAULT_APP_DATABASE_CONNECTION_LIMIT = 10;

export interface ProvisionedTenant {
  applicationId: string;
  slug: string;
  databaseName: string;
  roleName: string;
  /** True when this call created the sign-in service (false when it already existed). */
  created: boolean;
}

export class ProvisionError extends Error {
  override readonly name = 'ProvisionError';
}

/**
 * Gives an application everything its sign-in service needs: its own database and role (unless it
 * has one), the `service_auth` schema, a cookie secret, a first signing key and its trusted
 * origins. Idempotent; concurrent calls for one application are serialised by an advisory lock.
 */
export async function provisionSignInTenant(options: ProvisionOptions): Promise<ProvisionedTenant> {
  const { platform, keyring, applicationId } = options;
  return platform.signInServices.withProvisioningLock(applicationId, async () => {
    const app = await platform.signInServices.findForProvisioning(applicationId);
    if (!app) throw new ProvisionError(`application ${applicationId} does not exist`);

    const database = app.database ?? (await createApplicationDatabase(options, app.ownerId));
    const password = decryptEnvelopeToString(keyring, database.password, envelopeBinding.databasePassword(applicationId));
    const tenantUrl = tenantDatabaseUrl(options.adminDatabaseUrl, database, password);
    await migrateServiceAuth(tenantUrl);
    await ensureSigningKey(tenantUrl, keyring, applicationId);

    let created = false;
    if (!app.signInService) {
      const secret = randomBytes(32).toString('base64url');
      await platform.signInServices.create(applicationId, encryptEnvelope(keyring, secret, envelopeBinding.cookieSecret(applicationId)));
      created = true;
    }
    await platform.applications.trustedOrigins.add(applicationId, applicationOrigins(app.slug, options.appsDomains, options.appsScheme, app.domains));
    return { applicationId, slug: app.slug, databaseName: database.databaseName, roleName: database.roleName, created };
  });
}

async function createApplicationDatabase(options: ProvisionOptions, ownerId: string) {
  const { databaseName, roleName } = applicationDatabaseNames(options.applicationId);
  const password = randomBytes(24).toString('base64url');
  const admin = new pg.Client({ connectionString: options.adminDatabaseUrl });
  await admin.connect();
  try {
    // A half-finished earlier attempt may have left the role or database: adopt them.
    const role = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [roleName]);
    const verb = role.rowCount ? 'ALTER' : 'CREATE';
    await admin.query(
      `${verb} ROLE ${quoteIdent(roleName)} WITH ${roleAttributes(roleName, password, options.connectionLimit ?? DEFAULT_APP_DATABASE_CONNECTION_LIMIT)}`,
    );
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE ${quoteIdent(databaseName)} OWNER ${quoteIdent(roleName)}`);
    // Its own role alone (the owner keeps CONNECT and TEMPORARY): no other application's role,
    // nor any other role on the server, may connect. A REVOKE that could not apply only warns.
    await admin.query(`REVOKE ALL ON DATABASE ${quoteIdent(databaseName)} FROM PUBLIC`);
    const open = await admin.query(`SELECT has_database_privilege('public', $1, 'CONNECT') OR has_database_privilege('public', $1, 'TEMPORARY') AS open`, [
      databaseName,
    ]);
    if (open.rows[0].open)
      throw new ProvisionError(
        `could not revoke CONNECT on database ${databaseName} from PUBLIC; the role of APP_DATABASES_ADMIN_URL must be a superuser or own it`,
      );
  } finally {
    await admin.end();
  }
  return options.platform.applications.databases.create(options.applicationId, {
    ownerId: asOwnerId(ownerId),
    databaseName,
    roleName,
    password: encryptEnvelope(options.keyring, password, envelopeBinding.databasePassword(options.applicationId)),
  });
}

/**
 * What every application role is: no privilege beyond logging in, a bounded number of
 * connections, and as its password the SCRAM secret PgBouncer also holds (pooler/scram-secret.ts).
 */
function roleAttributes(roleName: string, password: string, connectionLimit: number): string {
  if (!Number.isInteger(connectionLimit) || connectionLimit < 1)
    throw new ProvisionError(`an application role's connection limit must be a positive integer (got ${connectionLimit})`);
  return `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE CONNECTION LIMIT ${connectionLimit} PASSWORD ${quoteLiteral(roleScramSecret(roleName, password))}`;
}

/**
 * The back-fill for roles made before the limits existed (run by `pnpm start` at every start):
 * each application role gets the connection limit and its password as the SCRAM secret PgBouncer
 * holds (the same password, so nothing that connects with it breaks). Idempotent.
 */
export async function enforceApplicationRoles(
  adminDatabaseUrl: string,
  roles: { roleName: string; password: string }[],
  connectionLimit = DEFAULT_APP_DATABASE_CONNECTION_LIMIT,
): Promise<void> {
  if (roles.length === 0) return;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  try {
    for (const role of roles) {
      const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.roleName]);
      if (exists.rowCount) await admin.query(`ALTER ROLE ${quoteIdent(role.roleName)} WITH ${roleAttributes(role.roleName, role.password, connectionLimit)}`);
    }
  } finally {
    await admin.end();
  }
}

async function ensureSigningKey(tenantUrl: string, keyring: Keyring, applicationId: string): Promise<void> {
  const client = new pg.Client({ connectionString: tenantUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM service_auth.jwks LIMIT 1');
    if (!rowCount) await insertSigningKey(client as never, keyring, applicationId);
  } finally {
    await client.end();
  }
}

/** Drops an application's own database and role (tests, and deleting an application). */
export async function dropApplicationDatabase(adminDatabaseUrl: string, applicationId: string): Promise<void> {
  const { databaseName, roleName } = applicationDatabaseNames(applicationId);
  const admin = new pg.Client({ connectionString: withDatabase(adminDatabaseUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(databaseName)} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${quoteIdent(roleName)}`);
  } finally {
    await admin.end();
  }
}

function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
