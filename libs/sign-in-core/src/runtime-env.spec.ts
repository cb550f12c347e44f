import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { encryptEnvelope, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData, type ApplicationId, type PlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL, createTestDatabase, type TestDatabase } from '@slipway/testing';
import { dropApplicationDatabase, provisionSignInTenant } from './provision.js';
import { signInRuntimeEnv } from './runtime-env.js';
import { refreshTrustedOrigins } from './trusted-origins.js';

describe('signInRuntimeEnv and refreshTrustedOrigins (real Postgres)', () => {
  let db: TestDatabase;
  let platform: PlatformData;
  let prisma: PrismaClient;
  const keyring = keyringFromMasterKey(randomBytes(32).toString('base64'));
  const apps: string[] = [];
  const config = { authPublicUrl: 'http://localhost:3001', appDatabasesUrl: TEST_SERVER_URL };

  beforeAll(async () => {
    db = await createTestDatabase('signincore-env');
    platform = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 3 });
    prisma = platform.infrastructure.prisma;
  });
  afterAll(async () => {
    for (const id of apps) await dropApplicationDatabase(TEST_SERVER_URL, id);
    await platform.close();
    await db.drop();
  });

  async function application(slug: string): Promise<ApplicationId> {
    const owner = await prisma.owner.create({ data: { email: `${slug}@example.com` } });
    const app = await prisma.application.create({ data: { ownerId: owner.id, name: slug, slug } });
    apps.push(app.id);
    return asApplicationId(app.id);
  }
  const provision = (applicationId: ApplicationId) =>
    provisionSignInTenant({ platform, keyring, adminDatabaseUrl: TEST_SERVER_URL, appsDomains: ['localhost:8080'], appsScheme: 'http', applicationId });
  const setSecret = (applicationId: string, name: string, value: string) =>
    prisma.secret.create({ data: { applicationId, name, value: Buffer.from(encryptEnvelope(keyring, value, envelopeBinding.secret(applicationId, name))) } });

  it('gives nothing while sign-in is off', async () => {
    const id = await application('off');
    expect(await signInRuntimeEnv(platform.signInServices, keyring, id, config)).toEqual({ runtime: {}, buildTime: {} });
  });

  it('gives the four variables and a DATABASE_URL that connects as the application role', async () => {
    const id = await application('on');
    await provision(id);
    const env = await signInRuntimeEnv(platform.signInServices, keyring, id, config);
    expect(Object.keys(env.runtime).sort()).toEqual([
      'DATABASE_URL',
      'SERVICE_AUTH_BASE_URL',
      'SERVICE_AUTH_COOKIE_SECRET',
      'SERVICE_AUTH_JWKS_URL',
      'VITE_SERVICE_AUTH_URL',
    ]);
    expect(env.runtime['SERVICE_AUTH_BASE_URL']).toBe('http://localhost:3001/a/on');
    expect(env.runtime['SERVICE_AUTH_JWKS_URL']).toBe('http://localhost:3001/a/on/jwks');
    expect(env.buildTime).toEqual({ VITE_SERVICE_AUTH_URL: 'http://localhost:3001/a/on' });
    const client = new pg.Client({ connectionString: env.runtime['DATABASE_URL'] });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT current_user AS who, (SELECT count(*)::int FROM service_auth.users) AS users');
      expect(rows[0]).toEqual({ who: expect.stringMatching(/^app_/), users: 0 });
    } finally {
      await client.end();
    }
  });

  it('leaves sign-in alone when the project set SERVICE_AUTH_BASE_URL, and never overwrites its DATABASE_URL', async () => {
    const id = await application('owned');
    await provision(id);
    await setSecret(id, 'DATABASE_URL', 'postgres://mine@db.example.com/mine');
    const withOwnDb = await signInRuntimeEnv(platform.signInServices, keyring, id, config);
    expect(withOwnDb.runtime['DATABASE_URL']).toBeUndefined();
    expect(withOwnDb.runtime['SERVICE_AUTH_BASE_URL']).toBe('http://localhost:3001/a/owned');
    await setSecret(id, 'SERVICE_AUTH_BASE_URL', 'https://auth.example.com');
    expect(await signInRuntimeEnv(platform.signInServices, keyring, id, config)).toEqual({ runtime: {}, buildTime: {} });
  });

  it('refreshTrustedOrigins follows publishing domains, verified custom domains and given addresses; manual origins stay', async () => {
    const id = await application('origins');
    await provision(id);
    await prisma.trustedOrigin.create({ data: { applicationId: id, origin: 'https://manual.example.org', source: 'manual' } });
    await prisma.domain.create({ data: { applicationId: id, hostname: 'shop.example.com', verificationToken: 'a'.repeat(64), verifiedAt: new Date() } });
    // An unverified claim is not trusted, and an origin left behind for one (or for no domain) is removed.
    const pending = await prisma.domain.create({ data: { applicationId: id, hostname: 'claimed.example.org', verificationToken: 'b'.repeat(64) } });
    await prisma.trustedOrigin.createMany({
      data: [
        { applicationId: id, origin: 'https://claimed.example.org', source: 'custom_domain', domainId: pending.id },
        { applicationId: id, origin: 'https://orphan.example.org', source: 'custom_domain' },
      ],
    });
    const origins = await refreshTrustedOrigins(platform.applications, id, {
      appsDomains: ['apps.example.net'],
      appsScheme: 'https',
      addresses: ['https://preview.example.net/path'],
    });
    expect(origins).toEqual(['https://manual.example.org', 'https://origins.apps.example.net', 'https://preview.example.net', 'https://shop.example.com']);
  });
});
