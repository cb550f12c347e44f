import type { PrismaClient } from '@slipway/platform-schema';
import { scratchPlatform } from '../../test/scratch-platform.js';
import type { OwnerId } from '../ids.js';
import type { PlatformData } from '../platform-data.module.js';
import { PreviewNameTakenError, TooManyPreviewsError } from './previews.js';

describe('Previews (real Postgres)', () => {
  const scratch = scratchPlatform('pd-previews', { poolSize: 3 });
  let data: PlatformData;
  let prisma: PrismaClient;
  let ada: OwnerId;

  beforeAll(async () => {
    ({
      data,
      platform: { prisma },
    } = scratch);
    ada = await scratch.owner('ada@example.com');
  });

  it("makes a preview once per name, resets its expiry on each deploy, and keeps it out of the owner's application list and :appId guard", async () => {
    const shop = await data.applications.create(ada, 'Shop', 'shop');
    const first = await data.applications.previews.ensure(shop.id, 'feat', 60_000, 10);
    const again = await data.applications.previews.ensure(shop.id, 'feat', 3_600_000, 10);
    expect(again.id).toBe(first.id);
    expect(again.expiresAt.getTime()).toBeGreaterThan(first.expiresAt.getTime());
    expect(await data.applications.previews.list(shop.id)).toEqual([expect.objectContaining({ id: first.id, name: 'feat', slug: 'shop--feat' })]);
    expect(await data.applications.previews.isPreviewOf(shop.id, first.id)).toBe(true);
    expect((await data.applications.listOwned(ada)).map((a) => a.slug)).toEqual(['shop']);
    expect(await data.applications.findOwned(ada, first.id)).toBeNull();
    expect(await data.applications.findOwned(ada, shop.id)).not.toBeNull();
  });

  it("counts every preview of the owner against the limit, and refuses an address that is another application's slug", async () => {
    const owner = await scratch.owner('grace@example.com');
    const a = await data.applications.create(owner, 'A', 'limit-a');
    const b = await data.applications.create(owner, 'B', 'limit-b');
    await data.applications.previews.ensure(a.id, 'one', 60_000, 2);
    await data.applications.previews.ensure(b.id, 'two', 60_000, 2);
    await expect(data.applications.previews.ensure(b.id, 'three', 60_000, 2)).rejects.toBeInstanceOf(TooManyPreviewsError);
    // A redeploy of an existing one is not a new preview.
    await expect(data.applications.previews.ensure(a.id, 'one', 60_000, 2)).resolves.toMatchObject({ name: 'one' });
    await data.applications.create(owner, 'Squatter', 'limit-a--taken');
    const other = await scratch.owner('linus@example.com');
    const c = await data.applications.create(other, 'C', 'limit-c');
    await data.applications.create(other, 'Squatter', 'limit-c--taken');
    await expect(data.applications.previews.ensure(c.id, 'taken', 60_000, 5)).rejects.toBeInstanceOf(PreviewNameTakenError);
  });

  it('finds expired previews without a deploy in progress, and removes one with what it stored', async () => {
    const app = await data.applications.create(ada, 'Expiry', 'expiry');
    const old = await data.applications.previews.ensure(app.id, 'old', 60_000, 10);
    const busy = await data.applications.previews.ensure(app.id, 'busy', 60_000, 10);
    await prisma.application.updateMany({ where: { id: { in: [old.id, busy.id] } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await prisma.deployment.create({ data: { applicationId: busy.id, status: 'building', sourceKey: 'sources/busy.tar' } });
    const done = await prisma.deployment.create({ data: { applicationId: old.id, status: 'succeeded', sourceKey: 'sources/old.tar' } });
    await prisma.release.create({ data: { applicationId: old.id, deploymentId: done.id, kind: 'static', artifactKey: 'releases/old.tar.gz', spec: {} } });
    const expired = (await data.applications.previews.expired()).filter((p) => p.parentId === app.id);
    expect(expired).toEqual([{ id: old.id, parentId: app.id }]);
    expect(await data.applications.previews.remove(app.id, busy.id)).toBe('in_progress');
    expect(await data.applications.previews.remove(app.id, old.id)).toEqual({
      id: old.id,
      parentId: app.id,
      slug: 'expiry--old',
      blobKeys: ['sources/old.tar', 'releases/old.tar.gz'],
    });
    expect(await data.applications.previews.remove(app.id, old.id)).toBe('not_found');
    expect(await prisma.release.count({ where: { applicationId: old.id } })).toBe(0);
  });
});
