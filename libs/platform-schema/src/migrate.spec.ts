import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { scratchDatabase } from '../test/scratch-database.js';
import { MigrationError, PLATFORM_MIGRATIONS_DIR, applyMigrations, readMigrations } from './migrate.js';

describe('applyMigrations (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  beforeEach(async () => {
    db = await scratchDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it('applies the platform migrations once and records them as prisma migrate deploy would', async () => {
    const expected = (await readMigrations()).map((m) => m.name);
    expect(expected.length).toBeGreaterThan(0);
    expect(await applyMigrations(db.url)).toEqual({ applied: expected, alreadyApplied: [] });
    expect(await applyMigrations(db.url)).toEqual({ applied: [], alreadyApplied: expected });

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query('SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations"');
    await client.end();
    const files = await readMigrations(PLATFORM_MIGRATIONS_DIR);
    expect(rows).toEqual(files.map((f) => ({ migration_name: f.name, checksum: f.checksum, finished_at: expect.any(Date), applied_steps_count: 1 })));
  });

  it('rolls back a failing migration, records nothing, and refuses edited history', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-migrations-'));
    await mkdir(join(dir, '001_ok'));
    await writeFile(join(dir, '001_ok', 'migration.sql'), 'CREATE TABLE a (id int);');
    await mkdir(join(dir, '002_bad'));
    await writeFile(join(dir, '002_bad', 'migration.sql'), 'CREATE TABLE b (id int); SELECT * FROM missing_table;');

    await expect(applyMigrations(db.url, dir)).rejects.toThrow(/002_bad failed: relation "missing_table" does not exist/);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const tables = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
    expect(tables.rows.map((r) => r.table_name)).toEqual(['_prisma_migrations', 'a']);

    await writeFile(join(dir, '002_bad', 'migration.sql'), 'CREATE TABLE b (id int);');
    await writeFile(join(dir, '001_ok', 'migration.sql'), 'CREATE TABLE a (id bigint);');
    await expect(applyMigrations(db.url, dir)).rejects.toThrow(new MigrationError('migration 001_ok was modified after it was applied (checksum differs)'));
    await client.end();
  });

  it('lets concurrent runners apply each migration exactly once', async () => {
    const results = await Promise.all([applyMigrations(db.url), applyMigrations(db.url), applyMigrations(db.url)]);
    const total = results.reduce((n, r) => n + r.applied.length, 0);
    expect(total).toBe((await readMigrations()).length);
  });
});
