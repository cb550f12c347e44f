import type { PrismaClient } from '@slipway/platform-schema';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asApplicationId, type ApplicationId, type OwnerId } from '../ids.js';
import type { PlatformData } from '../platform-data.module.js';
import { SlugTakenError } from './applications.repository.js';

describe('ApplicationsRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-apps', { poolSize: 2 });
  let data: PlatformData;
  let prisma: PrismaClient;
  let ada: OwnerId;
  let grace: OwnerId;

  beforeAll(async () => {
    ({
      data,
      platform: { prisma },
    } = scratch);
    ada = await scratch.owner('ada@example.com');
    grace = await scratch.owner('grace@example.com');
  });

  it('finds an application only for its owner (the :appId guard), and refuses a slug already taken', async () => {
    const shop = await data.applications.create(ada, 'Shop', 'shop');
    expect(await data.applications.findOwned(ada, shop.id)).toEqual({ id: shop.id, name: 'Shop', slug: 'shop' });
    expect(await data.applications.findOwned(grace, shop.id)).toBeNull();
    await expect(data.applications.create(grace, 'Shop', 'shop')).rejects.toBeInstanceOf(SlugTakenError);
    expect(await data.applications.takenSlugs(['shop', 'shop-2'])).toEqual(new Set(['shop']));
    expect(await data.applications.details(grace, shop.id)).toBeNull();
    expect(await data.applications.details(ada, shop.id)).toMatchObject({ slug: 'shop', signInService: null, database: null, liveReleaseId: null });
  });

  it('counts application databases per owner and reads one back as bytes', async () => {
    const app = await data.applications.create(grace, 'Db', 'db-app');
    expect(await data.applications.databases.find(app.id)).toBeNull();
    await data.applications.databases.create(app.id, { ownerId: grace, databaseName: 'app_x', roleName: 'app_x', password: Buffer.from('sealed') });
    expect(await data.applications.databases.countForOwner(grace)).toBe(1);
    expect(await data.applications.databases.countForOwner(ada)).toBe(0);
    const row = await data.applications.databases.find(app.id);
    expect(Buffer.from(row!.password).toString()).toBe('sealed');
    // A database named in the platform but not on the server has no size.
    expect(await data.applications.databases.sizeBytes('app_x')).toBeNull();
  });

  describe('trusted origins', () => {
    let id: ApplicationId;
    beforeAll(async () => {
      id = (await data.applications.create(ada, 'Origins', 'origins')).id;
    });

    it('adds without duplicates, lists in order, and replaces only the derived ones', async () => {
      await data.applications.trustedOrigins.add(id, [
        { origin: 'https://origins.old.example', source: 'publishing_domain' },
        { origin: 'https://origins.apps.example', source: 'app' },
      ]);
      await data.applications.trustedOrigins.add(id, [{ origin: 'https://origins.apps.example', source: 'app' }]);
      await prisma.trustedOrigin.create({ data: { applicationId: id, origin: 'https://manual.example', source: 'manual' } });
      const verified = await prisma.domain.create({
        data: { applicationId: id, hostname: 'shop.example.com', verificationToken: 'a'.repeat(64), verifiedAt: new Date() },
      });
      expect(await data.applications.trustedOrigins.sources(id)).toEqual({
        slug: 'origins',
        domains: [{ id: verified.id, hostname: 'shop.example.com', verifiedAt: verified.verifiedAt }],
        previews: [],
      });
      expect(await data.applications.trustedOrigins.sources(asApplicationId('00000000-0000-0000-0000-000000000000'))).toBeNull();

      const after = await data.applications.trustedOrigins.replaceDerived(id, [
        { origin: 'https://origins.apps.example', source: 'app' },
        { origin: 'https://shop.example.com', source: 'custom_domain', domainId: verified.id },
      ]);
      expect(after).toEqual(['https://manual.example', 'https://origins.apps.example', 'https://shop.example.com']);
      expect(await data.applications.trustedOrigins.list(id)).toEqual(after);
      expect((await data.applications.trustedOrigins.listOf([id])).map((o) => o.applicationId)).toEqual([id, id, id]);
    });
  });
});
