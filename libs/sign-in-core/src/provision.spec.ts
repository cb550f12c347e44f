import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { decryptEnvelopeToString, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData, type ApplicationId, type PlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL, createTestDatabase, type TestDatabase } from '@slipway/testing';
import { dropApplicationDatabase, provisionSignInTenant } from './provision.js';
import { rotateSigningKey } from './signing-keys.js';
import { tenantDatabaseUrl } from './tenant-database.js';

describe('provisionSignInTenant (real Postgres)', () => {
  let db: TestDatabase;
  let platform: PlatformData;
  let prisma: PrismaClient;
  const keyring = keyringFromMasterKey(randomBytes(32).toString('base64'));
  let appId: ApplicationId;

  beforeAll(async () => {
    db = await createTestDatabase('signincore');
    platform = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 3 });
    prisma = platform.infrastructure.prisma;
    const owner = await prisma.owner.create({ data: { email: 'o@example.com' } });
    const app = await prisma.application.create({ data: { ownerId: owner.id, name: 'Shop', slug: 'shop' } });
    await prisma.domain.create({ data: { applicationId: app.id, hostname: 'shop.example.com', verificationToken: 'a'.repeat(64), verifiedAt: new Date() } });
    // A claim whose TXT record was never found is not trusted.
    await prisma.domain.create({ data: { applicationId: app.id, hostname: 'claimed.example.org', verificationToken: 'b'.repeat(64) } });
    appId = asApplicationId(app.id);
  });
  afterAll(async () => {
    await dropApplicationDatabase(TEST_SERVER_URL, appId);
    await platform.close();
    await db.drop();
  });

  const provision = () =>
    provisionSignInTenant({
      platform,
      keyring,
      adminDatabaseUrl: TEST_SERVER_URL,
      appsDomains: ['localhost:8080', 'apps.example.net'],
      appsScheme: 'http',
      applicationId: appId,
    });

  it('creates database, schema, cookie secret, signing key and origins once, even under concurrent calls', async () => {
    const results = await Promise.all([provision(), provision(), provision()]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const again = await provision();
    expect(again.created).toBe(false);

    const database = await prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId: appId } });
    const password = decryptEnvelopeToString(keyring, database.password, envelopeBinding.databasePassword(appId));
    const service = await prisma.signInService.findUniqueOrThrow({ where: { applicationId: appId } });
    expect(Buffer.from(decryptEnvelopeToString(keyring, service.cookieSecret, envelopeBinding.cookieSecret(appId)), 'base64url').length).toBeGreaterThanOrEqual(
      32,
    );
    const origins = await prisma.trustedOrigin.findMany({ where: { applicationId: appId }, orderBy: { origin: 'asc' } });
    expect(origins.map((o) => o.origin)).toEqual([
      'http://shop.apps.example.net',
      'http://shop.example.com',
      'http://shop.localhost:8080',
      'https://shop.example.com',
    ]);

    const tenant = new pg.Client({ connectionString: tenantDatabaseUrl(TEST_SERVER_URL, database, password) });
    await tenant.connect();
    try {
      const tables = await tenant.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'service_auth' ORDER BY 1`);
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        '_migrations',
        'accounts',
        'admin_audit',
        'invitations',
        'jwks',
        'members',
        'organizations',
        'passkeys',
        'sessions',
        'two_factors',
        'users',
        'verifications',
      ]);
      const keys = await tenant.query('SELECT id, private_key FROM service_auth.jwks');
      expect(keys.rowCount).toBe(1);
      expect(keys.rows[0].private_key.toString('utf8')).not.toContain('"d"');
      const rotated = await rotateSigningKey(tenant as never, keyring, appId, 600);
      const after = await tenant.query('SELECT id, retires_at FROM service_auth.jwks ORDER BY activates_at');
      expect(after.rows.map((r) => r.id)).toEqual([keys.rows[0].id, rotated.kid]);
      expect(after.rows[0].retires_at.getTime()).toBe(rotated.activatesAt.getTime());
    } finally {
      await tenant.end();
    }
  });
});
