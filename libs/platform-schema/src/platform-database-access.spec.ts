/**
 * The platform database admits only the platform's own role: the migration revokes PUBLIC's
 * CONNECT and TEMPORARY (issue 17). Real Postgres; a role of the test's own plays any other role
 * on the server, e.g. an application's.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SERVER_URL, scratchDatabase } from '../test/scratch-database.js';
import { quoteIdent } from './database-url.js';
import { applyMigrations, readMigrations } from './migrate.js';

const MIGRATION = '20261125090000_platform_database_platform_roles_only';

function urlAs(role: string, databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = '';
  return url.toString();
}

async function asAdmin(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

async function publicPrivileges(databaseUrl: string): Promise<{ connect: boolean; temporary: boolean }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT has_database_privilege('public', current_database(), 'CONNECT') AS connect, has_database_privilege('public', current_database(), 'TEMPORARY') AS temporary`,
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

describe('platform database access (real Postgres)', () => {
  const role = `slipway_dbtest_role_${randomBytes(4).toString('hex')}`;
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  beforeAll(() => asAdmin(`CREATE ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD 'x'`));
  afterAll(() => asAdmin(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
  beforeEach(async () => {
    db = await scratchDatabase();
  });
  afterEach(() => db.drop());

  it('after migrating, another role on the server cannot connect (42501) while the migrating role still can', async () => {
    const other = new pg.Client({ connectionString: urlAs(role, db.url) });
    await other.connect(); // open to every role before the migration, as Postgres makes databases
    await other.end();

    await applyMigrations(db.url);
    expect(await publicPrivileges(db.url)).toEqual({ connect: false, temporary: false });
    const refused = new pg.Client({ connectionString: urlAs(role, db.url) });
    refused.on('error', () => undefined);
    await expect(refused.connect()).rejects.toMatchObject({
      code: '42501',
      message: expect.stringMatching(/^permission denied for database "slipway_dbtest_/),
    });
    await refused.end().catch(() => undefined);
  });

  it('fails closed, naming the fix, when the migrating role does not own the database', async () => {
    const migration = (await readMigrations()).find((m) => m.name === MIGRATION);
    expect(migration).toBeDefined();
    const notOwner = new pg.Client({ connectionString: urlAs(role, db.url) });
    await notOwner.connect();
    try {
      await expect(notOwner.query(migration!.sql)).rejects.toMatchObject({
        message: expect.stringMatching(
          new RegExp(`^cannot revoke CONNECT and TEMPORARY on database "?slipway_dbtest_\\w+"? from PUBLIC: role ${role} does not own it$`),
        ),
        hint: expect.stringContaining(`ALTER DATABASE`),
      });
    } finally {
      await notOwner.end();
    }
    expect(await publicPrivileges(db.url)).toEqual({ connect: true, temporary: true });
  });
});
