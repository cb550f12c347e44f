import type { PrismaClient } from '@slipway/platform-schema';
import { scratchPlatform } from '../../test/scratch-platform.js';
import type { ApplicationId, OwnerId } from '../ids.js';
import type { PlatformData } from '../platform-data.module.js';

describe('SignInServicesRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-signin', { poolSize: 2 });
  let data: PlatformData;
  let prisma: PrismaClient;
  let owner: OwnerId;
  let app: ApplicationId;

  beforeAll(async () => {
    ({
      data,
      platform: { prisma },
    } = scratch);
    owner = await scratch.owner('ada@example.com');
    app = (await data.applications.create(owner, 'Shop', 'shop')).id;
  });

  it('creates a service, updates its settings with allowLocalhost in one go, and lists it for its owner', async () => {
    expect(await data.signInServices.findSettings(app)).toBeNull();
    expect(await data.signInServices.listServices({ ownerId: owner })).toEqual([]);
    await data.signInServices.create(app, Buffer.from('sealed secret'));
    await data.signInServices.updateSettings(app, { requireEmailVerification: true }, false);
    expect(await data.signInServices.findSettings(app)).toEqual({ settings: { requireEmailVerification: true } });
    const [listed] = await data.signInServices.listServices({ applicationId: app });
    expect(listed).toMatchObject({ id: app, slug: 'shop', allowLocalhost: false });
    expect(Buffer.from(listed!.signInService!.cookieSecret).toString()).toBe('sealed secret');
    expect(await data.signInServices.findTenantBySlug('shop')).toMatchObject({ id: app, database: null, trustedOrigins: [] });
  });

  it('reads the outbox newest first, at most `limit`', async () => {
    await prisma.email.createMany({
      data: [1, 2, 3].map((n) => ({
        applicationId: app,
        kind: 'verify',
        toAddress: `u${n}@example.com`,
        subject: `s${n}`,
        textBody: 'b',
        createdAt: new Date(Date.now() + n * 1000),
      })),
    });
    expect((await data.emails.latest(app, 2)).map((e) => e.toAddress)).toEqual(['u3@example.com', 'u2@example.com']);
  });

  it('serialises work under one owner lock, on a connection outside the pool', async () => {
    const order: string[] = [];
    const step = (name: string) => async () => {
      order.push(`${name} in`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The pool stays usable while the lock is held (the lock has its own connection).
      await data.applications.databases.countForOwner(owner);
      order.push(`${name} out`);
    };
    await Promise.all([data.signInServices.withOwnerDatabasesLock(owner, step('a')), data.signInServices.withOwnerDatabasesLock(owner, step('b'))]);
    expect(order).toEqual(order[0] === 'a in' ? ['a in', 'a out', 'b in', 'b out'] : ['b in', 'b out', 'a in', 'a out']);
  });
});
