import { createHash, randomUUID } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { quoteIdent } from './database-url.js';

/** The platform's migrations, in Prisma's layout: `<timestamp>_<name>/migration.sql`. */
export const PLATFORM_MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/platform/migrations', import.meta.url));

// Prisma's own table, so `prisma migrate status/deploy` would see the same history.
const migrationsTableDdl = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

// Prisma Migrate's advisory lock key, so our runner and `prisma migrate deploy` exclude each other.
const ADVISORY_LOCK_KEY = 72707369;

export interface Migration {
  name: string;
  sql: string;
  /** SHA-256 of the file's bytes, hex: what Prisma stores in `checksum`. */
  checksum: string;
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export async function readMigrations(dir: string = PLATFORM_MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
}

/** A short fingerprint of a set of migrations, e.g. to name a migrated template database. */
export function migrationsFingerprint(migrations: Migration[]): string {
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(`${m.name}:${m.checksum}\n`);
  return hash.digest('hex').slice(0, 12);
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

/**
 * Applies pending migrations in order, each in its own transaction, and records them in
 * `_prisma_migrations` as `prisma migrate deploy` does. Refuses to continue when an applied
 * migration's file changed, or a previous attempt failed half-way (like Prisma's P3009).
 */
export interface MigrateOptions {
  /**
   * Keep the history in `<schema>._migrations` (created with the schema) instead of the
   * platform's `_prisma_migrations`, e.g. for a service's own schema inside another database.
   */
  schema?: string;
}

export async function applyMigrations(databaseUrl: string, dir: string = PLATFORM_MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = await readMigrations(dir);
  const table = options.schema ? `${quoteIdent(options.schema)}."_migrations"` : '"_prisma_migrations"';
  const lockKey = options.schema ? `hashtext('slipway-migrations:' || $1::text)` : '$1';
  const lockArg = options.schema ?? ADVISORY_LOCK_KEY;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${lockKey})`, [lockArg]);
    if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(options.schema)}`);
    await client.query(migrationsTableDdl(table));
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM ${table} WHERE rolled_back_at IS NULL`,
    );
    const failed = rows.find((r) => r.finished_at === null);
    if (failed) {
      throw new MigrationError(`migration ${failed.migration_name} failed earlier and was not rolled back; fix the database, then mark it rolled back`);
    }
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const result: MigrateResult = { applied: [], alreadyApplied: [] };
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was modified after it was applied (checksum differs)`);
        }
        result.alreadyApplied.push(migration.name);
        continue;
      }
      await runOne(client, migration, table);
      result.applied.push(migration.name);
    }
    return result;
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${lockKey})`, [lockArg]).catch(() => undefined);
    await client.end();
  }
}

async function runOne(client: pg.Client, migration: Migration, table: string): Promise<void> {
  const id = randomUUID();
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO ${table} (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
       VALUES ($1, $2, now(), $3, now(), 1)`,
      [id, migration.checksum, migration.name],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
  }
}
