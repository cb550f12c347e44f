import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { quoteIdent, withDatabase } from '../src/database-url.js';

// libs/testing builds on this lib, so this lib's own tests make their scratch databases directly.
export const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export async function scratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `slipway_dbtest_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  await admin.end();
  return {
    url: withDatabase(SERVER_URL, name),
    drop: async () => {
      const c = new pg.Client({ connectionString: SERVER_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      await c.end();
    },
  };
}
