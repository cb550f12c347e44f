/**
 * An application's own role gets its own database alone (issue 17, credentials as a second
 * wall): it cannot connect to the platform database nor to another application's database.
 * Real Postgres, real provisioning; the platform database is migrated directly (a clone of the
 * template would not carry the database's privileges: CREATE DATABASE … TEMPLATE does not copy them).
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { applyMigrations, withDatabase, type PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData, type PlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL, createEmptyDatabase, type TestDatabase } from '@slipway/testing';
import { dropApplicationDatabase, provisionSignInTenant } from './provision.js';
import { tenantDatabaseUrl } from './tenant-database.js';

describe('application database roles (real Postgres)', () => {
  let platform: TestDatabase;
  let data: PlatformData;
  let prisma: PrismaClient;
  const keyring = keyringFromMasterKey(randomBytes(32).toString('base64'));
  const apps: string[] = [];
  const tenants = new Map<string, { url: string; databaseName: string }>();

  beforeAll(async () => {
    platform = await createEmptyDatabase('isolation');
    await applyMigrations(platform.url);
    data = openPlatformData({ DATABASE_URL: platform.url }, { poolSize: 3 });
    prisma = data.infrastructure.prisma;
    const owner = await prisma.owner.create({ data: { email: 'tenant@example.com' } });
    for (const slug of ['attacker', 'victim']) {
      const app = await prisma.application.create({ data: { ownerId: owner.id, name: slug, slug } });
      apps.push(app.id);
      await provisionSignInTenant({
        platform: data,
        keyring,
        adminDatabaseUrl: TEST_SERVER_URL,
        appsDomains: ['localhost:8080'],
        appsScheme: 'http',
        applicationId: asApplicationId(app.id),
      });
      const database = await prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: app.id } });
      const password = decryptEnvelopeToString(keyring, database.password, envelopeBinding.databasePassword(app.id));
      tenants.set(slug, { url: tenantDatabaseUrl(TEST_SERVER_URL, database, password), databaseName: database.databaseName });
    }
  });
  afterAll(async () => {
    for (const id of apps) await dropApplicationDatabase(TEST_SERVER_URL, id);
    await data.close();
    await platform.drop();
  });

  async function connectAs(tenantUrl: string, databaseName: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: withDatabase(tenantUrl, databaseName) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  it("connects to its own database, and is refused (42501) by the platform database and another application's", async () => {
    const attacker = tenants.get('attacker')!;
    const own = await connectAs(attacker.url, attacker.databaseName);
    expect((await own.query('SELECT current_user AS role')).rows[0].role).toBe(attacker.databaseName);
    await own.end();

    await expect(connectAs(attacker.url, platform.name)).rejects.toMatchObject({ code: '42501', message: `permission denied for database "${platform.name}"` });
    const victim = tenants.get('victim')!;
    await expect(connectAs(attacker.url, victim.databaseName)).rejects.toMatchObject({
      code: '42501',
      message: `permission denied for database "${victim.databaseName}"`,
    });
  });

  it("holds the platform's lock keys only inside its own database: migrations of the platform database still run", async () => {
    const attacker = tenants.get('attacker')!;
    const own = await connectAs(attacker.url, attacker.databaseName);
    try {
      // Prisma Migrate's key (libs/platform-schema migrate.ts): advisory locks belong to one database.
      await own.query('SELECT pg_advisory_lock(72707369)');
      await expect(applyMigrations(platform.url)).resolves.toMatchObject({ applied: [] });
    } finally {
      await own.end();
    }
  });
});
