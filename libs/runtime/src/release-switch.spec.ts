import { DeploymentsRepository, PlatformInfrastructure, asApplicationId, asReleaseId, type ApplicationId, type ReleaseId } from '@slipway/platform-data';
import { TEST_REDIS_URL, createTestDatabase, testRedisPrefix, type TestDatabase } from '@slipway/testing';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { routesChannel } from '@slipway/messaging';
import { ReleaseNotFoundError, makeReleaseLive } from './release-switch.js';

describe('makeReleaseLive (real Postgres and Redis)', () => {
  let db: TestDatabase;
  let platform: PlatformInfrastructure;
  let deployments: DeploymentsRepository;
  let redis: Redis;
  let subscriber: Redis;
  const { prefix } = testRedisPrefix('switch');
  const messages: string[] = [];
  let applicationId: ApplicationId;
  let otherId: ApplicationId;
  let releases: ReleaseId[];
  beforeAll(async () => {
    db = await createTestDatabase('releaseswitch');
    platform = PlatformInfrastructure.open({ DATABASE_URL: db.url }, { poolSize: 2 });
    deployments = new DeploymentsRepository(platform);
    redis = new Redis(TEST_REDIS_URL);
    subscriber = new Redis(TEST_REDIS_URL);
    subscriber.on('message', (_channel, message: string) => messages.push(message));
    await subscriber.subscribe(routesChannel(prefix).name);
    const prisma = platform.prisma;
    const owner = await prisma.owner.create({ data: { email: 'switch@example.com' } });
    applicationId = asApplicationId((await prisma.application.create({ data: { ownerId: owner.id, name: 'a', slug: 'switch-a' } })).id);
    otherId = asApplicationId((await prisma.application.create({ data: { ownerId: owner.id, name: 'b', slug: 'switch-b' } })).id);
    releases = [];
    for (const app of [applicationId, applicationId, otherId]) {
      const deployment = await prisma.deployment.create({ data: { applicationId: app, status: 'succeeded' } });
      releases.push(
        asReleaseId(
          (
            await prisma.release.create({
              data: { applicationId: app, deploymentId: deployment.id, kind: 'static', artifactKey: 'releases/x.tar.gz', spec: {} },
            })
          ).id,
        ),
      );
    }
  });
  afterAll(async () => {
    subscriber.disconnect();
    redis.disconnect();
    await platform.close();
    await db.drop();
  });

  /** What was published on the routes channel, once something was (a poll with a deadline). */
  const announced = async (): Promise<unknown[]> => {
    const deadline = Date.now() + 5_000;
    while (messages.length === 0 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
    return messages.map((m) => JSON.parse(m) as unknown);
  };
  const liveOf = async (id: ApplicationId) => (await platform.prisma.application.findUniqueOrThrow({ where: { id } })).liveReleaseId;

  it('makes an earlier release live and tells every edge', async () => {
    await makeReleaseLive(deployments, redis, prefix, applicationId, releases[0]!);
    expect(await liveOf(applicationId)).toBe(releases[0]);
    expect(await announced()).toEqual([{ applicationId }]);
  });

  it("refuses another application's release or an unknown one, and announces nothing", async () => {
    messages.length = 0;
    await expect(makeReleaseLive(deployments, redis, prefix, applicationId, releases[2]!)).rejects.toBeInstanceOf(ReleaseNotFoundError);
    await expect(makeReleaseLive(deployments, redis, prefix, applicationId, asReleaseId(randomUUID()))).rejects.toBeInstanceOf(ReleaseNotFoundError);
    expect(await liveOf(applicationId)).toBe(releases[0]);
    expect(await liveOf(otherId)).toBeNull();
    await makeReleaseLive(deployments, redis, prefix, otherId, releases[2]!);
    expect(await announced()).toEqual([{ applicationId: otherId }]);
  });
});
