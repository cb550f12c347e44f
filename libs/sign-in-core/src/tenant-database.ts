import { fileURLToPath } from 'node:url';
import { applyMigrations, type MigrateResult } from '@slipway/platform-schema';

/** The sign-in service's own migrations, applied to every tenant database. */
export const SERVICE_AUTH_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));
export const SERVICE_AUTH_SCHEMA = 'service_auth';

/** Names an application's own database and role after its id (lower-case, no dashes). */
export function applicationDatabaseNames(applicationId: string): { databaseName: string; roleName: string } {
  const name = `app_${applicationId.replace(/-/g, '').toLowerCase()}`;
  return { databaseName: name, roleName: name };
}

/** The URL the application's own role uses: the admin server's host and port, its own credentials. */
export function tenantDatabaseUrl(adminUrl: string, database: { databaseName: string; roleName: string }, password: string): string {
  const url = new URL(adminUrl);
  url.username = encodeURIComponent(database.roleName);
  url.password = encodeURIComponent(password);
  url.pathname = `/${encodeURIComponent(database.databaseName)}`;
  return url.toString();
}

/** Creates or updates `service_auth` in a tenant database; history in `service_auth._migrations`. */
export function migrateServiceAuth(tenantUrl: string): Promise<MigrateResult> {
  return applyMigrations(tenantUrl, SERVICE_AUTH_MIGRATIONS_DIR, { schema: SERVICE_AUTH_SCHEMA });
}
