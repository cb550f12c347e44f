import pg from 'pg';
import { createTestDatabase, testRedisPrefix, TEST_REDIS_URL } from './index.js';
import { Redis } from 'ioredis';

describe('createTestDatabase', () => {
  it('gives each caller its own migrated database and drops it afterwards', async () => {
    const [a, b] = await Promise.all([createTestDatabase('a'), createTestDatabase('b')]);
    expect(a.url).not.toBe(b.url);
    const client = new pg.Client({ connectionString: a.url });
    await client.connect();
    await client.query(`INSERT INTO owners (email) VALUES ('only-in-a@example.com')`);
    const migrations = await client.query('SELECT count(*)::int AS n FROM "_prisma_migrations"');
    expect(migrations.rows[0].n).toBeGreaterThan(0);
    await client.end();

    const other = new pg.Client({ connectionString: b.url });
    await other.connect();
    expect((await other.query('SELECT count(*)::int AS n FROM owners')).rows[0].n).toBe(0);
    await other.end();

    await Promise.all([a.drop(), b.drop()]);
    const admin = new pg.Client({ connectionString: a.url.replace(a.name, 'postgres') });
    await admin.connect();
    expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [a.name])).rowCount).toBe(0);
    await admin.end();
  });
});

describe('testRedisPrefix', () => {
  it('cleans up only its own keys', async () => {
    const mine = testRedisPrefix('mine');
    const theirs = testRedisPrefix('theirs');
    const redis = new Redis(TEST_REDIS_URL);
    await redis.set(`${mine.prefix}k`, '1');
    await redis.set(`${theirs.prefix}k`, '1');
    await mine.cleanup();
    expect(await redis.exists(`${mine.prefix}k`)).toBe(0);
    expect(await redis.exists(`${theirs.prefix}k`)).toBe(1);
    await theirs.cleanup();
    redis.disconnect();
  });
});
