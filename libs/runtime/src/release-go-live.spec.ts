import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EdgeHandoff, publishRoutesChanged, routesChannel, type EdgeSwitchOutcome } from '@slipway/messaging';
import { DeploymentsRepository, PlatformInfrastructure, asApplicationId, asReleaseId, type ApplicationId, type ReleaseId } from '@slipway/platform-data';
import { TEST_REDIS_URL, createTestDatabase, testRedisPrefix, type TestDatabase } from '@slipway/testing';
import { Redis } from 'ioredis';
import { ReleaseGoLive } from './release-go-live.js';
import { ReleaseNotFoundError } from './release-switch.js';

/** The use case against real Postgres and Redis, and an edge over real HTTP that records the order of what it is asked. */
describe('ReleaseGoLive: start → switch → commit → announce', () => {
  const masterKey = randomBytes(32).toString('base64');
  const { prefix } = testRedisPrefix('golive');
  let db: TestDatabase;
  let platform: PlatformInfrastructure;
  let deployments: DeploymentsRepository;
  let redis: Redis;
  let subscriber: Redis;
  let server: Server;
  let goLive: ReleaseGoLive;
  let applicationId: ApplicationId;
  let releases: ReleaseId[];
  /** What happened, in order: the edge's calls, the announcements. */
  const events: string[] = [];
  let startAnswer: { status: number; body: unknown } = { status: 200, body: { status: 'healthy', sandbox: { status: 'on' } } };

  beforeAll(async () => {
    db = await createTestDatabase('golive');
    platform = PlatformInfrastructure.open({ DATABASE_URL: db.url }, { poolSize: 2 });
    deployments = new DeploymentsRepository(platform);
    redis = new Redis(TEST_REDIS_URL);
    subscriber = new Redis(TEST_REDIS_URL);
    subscriber.on('message', (_channel, message: string) => events.push(`announced ${message}`));
    await subscriber.subscribe(routesChannel(prefix).name);
    server = createServer((req, res) => {
      const live = (async () => (await platform.prisma.application.findUniqueOrThrow({ where: { id: applicationId } })).liveReleaseId)();
      void live.then((liveReleaseId) => {
        events.push(
          `${req.url?.endsWith('/start') ? 'start' : 'switch'} (live: ${liveReleaseId === null ? 'none' : releases.indexOf(asReleaseId(liveReleaseId))})`,
        );
        const { status, body } = req.url?.endsWith('/start') ? startAnswer : { status: 200, body: {} };
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const edge = new EdgeHandoff({ edgeUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, masterKey, timeoutMs: 5_000 });
    goLive = new ReleaseGoLive(edge, (message) => publishRoutesChanged(redis, prefix, message));
    const prisma = platform.prisma;
    const owner = await prisma.owner.create({ data: { email: 'golive@example.com' } });
    applicationId = asApplicationId((await prisma.application.create({ data: { ownerId: owner.id, name: 'a', slug: 'golive-a' } })).id);
    releases = [];
    for (let i = 0; i < 2; i++) {
      const deployment = await prisma.deployment.create({ data: { applicationId, status: 'succeeded' } });
      releases.push(
        asReleaseId(
          (await prisma.release.create({ data: { applicationId, deploymentId: deployment.id, kind: 'node', artifactKey: 'releases/x.tar.gz', spec: {} } })).id,
        ),
      );
    }
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
    subscriber.disconnect();
    redis.disconnect();
    await platform.close();
    await db.drop();
  });
  beforeEach(() => {
    events.length = 0;
  });

  /** The events once `count` happened (a poll with a deadline: the announcement arrives through Redis). */
  const eventsOnce = async (count: number): Promise<string[]> => {
    const deadline = Date.now() + 5_000;
    while (events.length < count && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
    return [...events];
  };
  const liveOf = async () => (await platform.prisma.application.findUniqueOrThrow({ where: { id: applicationId } })).liveReleaseId;
  const refused = (outcome: { kind: string }) => new Error(`refused: ${outcome.kind}`);

  it('starts, switches, then commits and announces, in that order', async () => {
    const switched: EdgeSwitchOutcome[] = [];
    const started: unknown[] = [];
    await goLive.run(deployments, applicationId, releases[0]!, {
      start: true,
      refused,
      started: (outcome) => void started.push(outcome),
      switched: (outcome) => void switched.push(outcome),
    });
    expect(await liveOf()).toBe(releases[0]);
    expect(await eventsOnce(3)).toEqual(['start (live: none)', 'switch (live: none)', `announced ${JSON.stringify({ applicationId })}`]);
    expect(started).toEqual([{ kind: 'healthy', containment: { status: 'on' } }]);
    expect(switched).toEqual([{ switched: true }]);
  });

  it('commits nothing and announces nothing when the start fails: the caller’s error, the live release unchanged', async () => {
    startAnswer = { status: 422, body: { error: 'exited with 1', logTail: 'boom' } };
    await expect(goLive.run(deployments, applicationId, releases[1]!, { start: true, refused })).rejects.toThrow('refused: unhealthy');
    startAnswer = { status: 200, body: { status: 'healthy', sandbox: { status: 'on' } } };
    expect(await liveOf()).toBe(releases[0]);
    await new Promise((ok) => setTimeout(ok, 200));
    expect(events).toEqual(['start (live: 0)']);
  });

  it('skips the start when asked (a static release of a deploy) and still switches before the commit', async () => {
    const started: unknown[] = [];
    await goLive.prepare(applicationId, releases[1]!, { start: false, refused, started: (outcome) => void started.push(outcome) });
    expect(started).toEqual([null]);
    expect(await goLive.commit(applicationId, () => deployments.releases.switchLive(applicationId, releases[1]!))).toBe(true);
    expect(await eventsOnce(2)).toEqual(['switch (live: 0)', `announced ${JSON.stringify({ applicationId })}`]);
    expect(await liveOf()).toBe(releases[1]);
  });

  it('announces even when the commit did not happen (the switched edge goes back to the database), and says so', async () => {
    await expect(goLive.run(deployments, applicationId, asReleaseId(randomUUID()), { start: true, refused })).rejects.toBeInstanceOf(ReleaseNotFoundError);
    expect(await liveOf()).toBe(releases[1]);
    expect(await eventsOnce(3)).toEqual(['start (live: 1)', 'switch (live: 1)', `announced ${JSON.stringify({ applicationId })}`]);
  });
});
