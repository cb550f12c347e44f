/**
 * Migration 20261125130000_custom_domain_verification on a database that already has domains:
 * they were attached without proof, so they become unverified claims with fresh, distinct tokens
 * and the trusted origins they produced are removed (other origins stay).
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { scratchDatabase } from '../test/scratch-database.js';
import { PLATFORM_MIGRATIONS_DIR, applyMigrations } from './migrate.js';

const MIGRATION = '20261125130000_custom_domain_verification';

describe(`migration ${MIGRATION} (real Postgres)`, () => {
  it('turns domains attached before it into pending claims and removes their trusted origins', async () => {
    const db = await scratchDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'slipway-migrations-'));
    const client = new pg.Client({ connectionString: db.url });
    try {
      const names = (await readdir(PLATFORM_MIGRATIONS_DIR, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
      for (const name of names.filter((n) => n < MIGRATION)) await cp(join(PLATFORM_MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
      await applyMigrations(db.url, dir);
      await client.connect();
      const owner = (await client.query(`INSERT INTO owners (email) VALUES ('o@example.com') RETURNING id`)).rows[0].id;
      const app = (await client.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'Shop', 'shop') RETURNING id`, [owner])).rows[0].id;
      const domains = (
        await client.query(`INSERT INTO domains (application_id, hostname) VALUES ($1, 'shop.example.com'), ($1, 'www.example.com') RETURNING id`, [app])
      ).rows;
      await client.query(
        `INSERT INTO trusted_origins (application_id, origin, source, domain_id) VALUES ($1, 'https://shop.example.com', 'custom_domain', $2), ($1, 'https://www.example.com', 'custom_domain', $3), ($1, 'http://shop.localhost:8080', 'app', NULL), ($1, 'https://manual.example.org', 'manual', NULL)`,
        [app, domains[0].id, domains[1].id],
      );

      for (const name of names.filter((n) => n >= MIGRATION)) await cp(join(PLATFORM_MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
      expect((await applyMigrations(db.url, dir)).applied).toContain(MIGRATION);

      const after = (await client.query(`SELECT hostname, verification_token, verified_at FROM domains ORDER BY hostname`)).rows;
      expect(after).toEqual([
        { hostname: 'shop.example.com', verification_token: expect.stringMatching(/^[0-9a-f]{64}$/), verified_at: null },
        { hostname: 'www.example.com', verification_token: expect.stringMatching(/^[0-9a-f]{64}$/), verified_at: null },
      ]);
      expect(after[0].verification_token).not.toBe(after[1].verification_token);
      expect((await client.query(`SELECT origin FROM trusted_origins ORDER BY origin`)).rows.map((r) => r.origin)).toEqual([
        'http://shop.localhost:8080',
        'https://manual.example.org',
      ]);
      // Several applications may now claim a name; only one may hold it verified.
      const other = (await client.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'Other', 'other') RETURNING id`, [owner])).rows[0].id;
      await client.query(`INSERT INTO domains (application_id, hostname, verification_token, verified_at) VALUES ($1, 'shop.example.com', 't', now())`, [
        other,
      ]);
      await expect(client.query(`UPDATE domains SET verified_at = now() WHERE application_id = $1`, [app])).rejects.toThrow(/domains_one_verified_holder/);
    } finally {
      await client.end().catch(() => undefined);
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
