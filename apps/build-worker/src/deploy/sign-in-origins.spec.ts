import { tenantChangedChannel } from '@slipway/messaging';
import { openPlatformData, type PlatformData } from '@slipway/platform-data';
import { createTestDatabase, serviceTestEnv, type TestDatabase } from '@slipway/testing';
import type { Redis } from 'ioredis';
import { loadWorkerConfig } from '../config.js';
import { SignInOrigins } from './sign-in-origins.js';

describe('SignInOrigins (real Postgres)', () => {
  let db: TestDatabase;
  let data: PlatformData;

  beforeAll(async () => {
    db = await createTestDatabase('worker-origins');
    data = openPlatformData({ DATABASE_URL: db.url }, { poolSize: 2 });
  });
  afterAll(async () => {
    await data.close();
    await db.drop();
  });

  it('registers the application address under every publishing domain again and tells the sign-in replicas', async () => {
    const prisma = data.infrastructure.prisma;
    const owner = await prisma.owner.create({ data: { email: 'o@example.com' } });
    const app = await prisma.application.create({ data: { ownerId: owner.id, name: 'Shop', slug: 'shop' } });
    await prisma.trustedOrigin.create({ data: { applicationId: app.id, origin: 'http://shop.gone.example', source: 'publishing_domain' } });
    const published: [string, string][] = [];
    const publisher = { publish: async (channel: string, message: string) => published.push([channel, message]) } as unknown as Redis;
    const config = loadWorkerConfig(serviceTestEnv(db.url, { APPS_DOMAIN: 'localhost:8080,apps.example.net', APPS_SCHEME: 'http' }));

    const origins = await new SignInOrigins(config, data.applications, publisher).refresh(app.id);
    expect(origins).toEqual(['http://shop.apps.example.net', 'http://shop.localhost:8080']);
    const channel = tenantChangedChannel();
    expect(published).toEqual([[channel.name, channel.encode({ applicationId: app.id })]]);
  });
});
