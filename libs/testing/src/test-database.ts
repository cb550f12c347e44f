import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PLATFORM_MIGRATIONS_DIR, applyMigrations, migrationsFingerprint, quoteIdent, readMigrations, withDatabase } from '@slipway/platform-schema';

/** The Postgres server integration tests use: the machine's own, never a mock. */
export const TEST_SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Makes (once per set of migrations) a migrated template database, `slipway_tpl_<fingerprint>`.
 * Parallel test files race for it safely under an advisory lock.
 */
export async function ensureTemplateDatabase(migrationsDir: string = PLATFORM_MIGRATIONS_DIR): Promise<string> {
  const name = `slipway_tpl_${migrationsFingerprint(await readMigrations(migrationsDir))}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount) return;
      const building = `${name}_building_${randomBytes(3).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${quoteIdent(building)}`);
      await applyMigrations(withDatabase(TEST_SERVER_URL, building), migrationsDir);
      await admin.query(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(name)}`);
      await admin.query(`ALTER DATABASE ${quoteIdent(name)} WITH IS_TEMPLATE true`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

/** A fresh, migrated platform database of this test file's own, cloned from the template. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const template = await ensureTemplateDatabase();
  const name = `slipway_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(5).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`));
  return {
    name,
    url: withDatabase(TEST_SERVER_URL, name),
    drop: () => withAdmin(async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`))),
  };
}

/** An empty database (no migrations), e.g. to stand in for an application's own database. */
export async function createEmptyDatabase(label = 'empty'): Promise<TestDatabase> {
  const name = `slipway_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(5).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)}`));
  return {
    name,
    url: withDatabase(TEST_SERVER_URL, name),
    drop: () => withAdmin(async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`))),
  };
}

/**
 * Drops what a platform on the test server made for its applications (sign-in's own databases and
 * roles, as its `application_databases` lists them): they outlive the platform's own database.
 */
export async function dropApplicationDatabases(platformUrl: string): Promise<void> {
  const platformDb = new pg.Client({ connectionString: platformUrl });
  await platformDb.connect();
  const { rows } = await platformDb
    .query<{ database_name: string; role_name: string }>('SELECT database_name, role_name FROM application_databases')
    .catch(() => ({ rows: [] }));
  await platformDb.end();
  if (!rows.length) return;
  await withAdmin(async (server) => {
    for (const r of rows) {
      await server.query(`DROP DATABASE IF EXISTS ${quoteIdent(r.database_name)} WITH (FORCE)`);
      await server.query(`DROP ROLE IF EXISTS ${quoteIdent(r.role_name)}`);
    }
  });
}

/** SQL on the database at `url`, over a connection of its own (as the operator, never a tenant). */
export async function queryRows<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
