import { randomUUID } from 'node:crypto';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asDeploymentId, type ApplicationId, type DeploymentId, type OwnerId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import type { DeploymentsRepository, StartRules } from './deployments.repository.js';

const ONE_SLOT: StartRules = { order: 'fair', perOwner: 1, deadlineMs: 60_000 };

/**
 * The fair pick against the real Postgres: which queued deployment may start, decided and
 * claimed in one transaction. "Slots" here are simulated by finishing rows; the worker process
 * around it is tested in apps/build-worker/test/fair-queue.e2e.spec.ts.
 */
describe('BuildQueue (real Postgres)', () => {
  const scratch = scratchPlatform('buildqueue', { poolSize: 8 });
  let platform: PlatformInfrastructure;
  let repository: DeploymentsRepository;
  beforeAll(() => {
    ({
      platform,
      data: { deployments: repository },
    } = scratch);
  });
  afterEach(async () => {
    await platform.prisma.deployment.updateMany({ where: { status: { in: ['queued', 'building', 'releasing'] } }, data: { status: 'succeeded' } });
  });

  async function apps(owner: OwnerId, n: number): Promise<ApplicationId[]> {
    const out: ApplicationId[] = [];
    for (let i = 0; i < n; i++) out.push(await scratch.application(owner));
    return out;
  }

  /** Queued as the gateway does; `createdAt` spaced so arrival order is unambiguous. */
  async function queue(applicationId: ApplicationId, agoMs: number): Promise<DeploymentId> {
    const id = asDeploymentId(randomUUID());
    await repository.insertQueued(applicationId, { id, sourceKey: `sources/${id}.tar`, sourceBytes: 1, deadlineAt: new Date(Date.now() + 3_600_000) }, 100);
    await platform.pool.query(`UPDATE deployments SET created_at = now() - ($2 || ' milliseconds')::interval WHERE id = $1`, [id, String(agoMs)]);
    return id;
  }

  const finish = (id: DeploymentId) => platform.pool.query(`UPDATE deployments SET status = 'succeeded', finished_at = now() WHERE id = $1`, [id]);

  /** What one free slot does: looks at the jobs in arrival order and starts the first whose turn it is. */
  async function takeNext(waiting: [ApplicationId, DeploymentId][], rules = ONE_SLOT): Promise<DeploymentId | undefined> {
    for (const [applicationId, id] of waiting) {
      const decision = await repository.queue.tryStart(applicationId, id, rules);
      if (decision.kind === 'started') {
        waiting.splice(
          waiting.findIndex(([, other]) => other === id),
          1,
        );
        return id;
      }
    }
    return undefined;
  }

  it('round-robin: owner A with five queued deploys of five apps, owner B with one queued last — B is taken second', async () => {
    const [ownerA, ownerB] = [await scratch.owner(), await scratch.owner()];
    const aApps = await apps(ownerA, 5);
    const [bApp] = await apps(ownerB, 1);
    const waiting: [ApplicationId, DeploymentId][] = [];
    for (let i = 0; i < 5; i++) waiting.push([aApps[i]!, await queue(aApps[i]!, 10_000 - i * 1000)]);
    const aIds = waiting.map(([, id]) => id);
    const bId = await queue(bApp!, 1000);
    waiting.push([bApp!, bId]);

    const order: DeploymentId[] = [];
    for (let i = 0; i < 6; i++) {
      const next = await takeNext(waiting);
      expect(next).toBeDefined();
      order.push(next!);
      await finish(next!);
    }
    expect(order.indexOf(bId)).toBe(1);
    // A's own in arrival order, none lost.
    expect(order.filter((id) => id !== bId)).toEqual(aIds);
  });

  it('FIFO (the protection removed) takes B last: what the fair order prevents', async () => {
    const [ownerA, ownerB] = [await scratch.owner(), await scratch.owner()];
    const aApps = await apps(ownerA, 3);
    const [bApp] = await apps(ownerB, 1);
    const waiting: [ApplicationId, DeploymentId][] = [];
    for (let i = 0; i < 3; i++) waiting.push([aApps[i]!, await queue(aApps[i]!, 10_000 - i * 1000)]);
    const bId = await queue(bApp!, 1000);
    waiting.push([bApp!, bId]);
    const order: DeploymentId[] = [];
    for (let i = 0; i < 4; i++) {
      const next = (await takeNext(waiting, { ...ONE_SLOT, order: 'fifo' }))!;
      order.push(next);
      await finish(next);
    }
    expect(order.indexOf(bId)).toBe(3);
  });

  it('an owner at its cap waits while it has a build running; another owner starts at once', async () => {
    const [ownerA, ownerB] = [await scratch.owner(), await scratch.owner()];
    const aApps = await apps(ownerA, 3);
    const [bApp] = await apps(ownerB, 1);
    const a1 = await queue(aApps[0]!, 5000);
    const a2 = await queue(aApps[1]!, 4000);
    expect((await repository.queue.tryStart(aApps[0]!, a1, ONE_SLOT)).kind).toBe('started');
    // A has one running: its next waits (two slots, at most one per owner).
    expect(await repository.queue.tryStart(aApps[1]!, a2, ONE_SLOT)).toMatchObject({ kind: 'wait', reason: expect.stringMatching(/at most 1 per owner/) });
    const b1 = await queue(bApp!, 100);
    expect((await repository.queue.tryStart(bApp!, b1, ONE_SLOT)).kind).toBe('started');
    // A second cap allows two of A's at once.
    expect((await repository.queue.tryStart(aApps[1]!, a2, { ...ONE_SLOT, perOwner: 2 })).kind).toBe('started');
  });

  it('holds under concurrent workers: many slots asking at once never start more than the cap of one owner', async () => {
    const ownerA = await scratch.owner();
    const aApps = await apps(ownerA, 6);
    const ids: [ApplicationId, DeploymentId][] = [];
    for (let i = 0; i < 6; i++) ids.push([aApps[i]!, await queue(aApps[i]!, 6000 - i * 500)]);
    for (let round = 0; round < 3; round++) {
      // Every queued deployment asked for by its own "worker" at the same moment, twice over.
      const decisions = await Promise.all([...ids, ...ids].map(([app, id]) => repository.queue.tryStart(app, id, { ...ONE_SLOT, perOwner: 2 })));
      const running = await platform.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deployments WHERE status = 'building' AND application_id = ANY($1::uuid[])`,
        [aApps],
      );
      expect(running.rows[0]!.n).toBeLessThanOrEqual(2);
      expect(decisions.filter((d) => d.kind === 'started').length).toBeGreaterThanOrEqual(1);
      // The ones that started finish; the next round picks again.
      await platform.pool.query(`UPDATE deployments SET status = 'succeeded' WHERE status = 'building' AND application_id = ANY($1::uuid[])`, [aApps]);
    }
  });

  it('a deployment already building continues without waiting its turn (a stalled attempt handed over)', async () => {
    const [ownerA, ownerB] = [await scratch.owner(), await scratch.owner()];
    const [aApp] = await apps(ownerA, 1);
    const [bApp] = await apps(ownerB, 1);
    const a1 = await queue(aApp!, 5000);
    const first = await repository.queue.tryStart(aApp!, a1, ONE_SLOT);
    await queue(bApp!, 100);
    const again = await repository.queue.tryStart(aApp!, a1, ONE_SLOT);
    expect(first).toMatchObject({ kind: 'started', attempt: 1 });
    expect(again).toMatchObject({ kind: 'started', attempt: 2 });
    expect(await repository.queue.stillRunning(aApp!, a1, 1)).toBe(false);
    expect(await repository.queue.stillRunning(aApp!, a1, 2)).toBe(true);
  });

  it('the deadline counts from the start: a deploy queued long ago gets the whole run deadline, and its queued time is reported', async () => {
    const [app] = await apps(await scratch.owner(), 1);
    const id = await queue(app!, 120_000);
    await platform.pool.query(`UPDATE deployments SET deadline_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const before = Date.now();
    const started = await repository.queue.tryStart(app!, id, { ...ONE_SLOT, deadlineMs: 600_000 });
    expect(started.kind).toBe('started');
    if (started.kind !== 'started') return;
    expect(started.deadlineAt.getTime()).toBeGreaterThan(before + 590_000);
    expect(started.queuedMs).toBeGreaterThan(119_000);
    // The reconciler's queue deadline no longer applies once it runs.
    expect(
      await repository.failActive(app!, id, { code: 'queue_timeout', message: 'late', step: null }, { status: 'queued', deadlineBefore: new Date() }),
    ).toBe(false);
  });

  it('finished or unknown deployments are gone', async () => {
    const [app] = await apps(await scratch.owner(), 1);
    expect(await repository.queue.tryStart(app!, asDeploymentId(randomUUID()), ONE_SLOT)).toEqual({ kind: 'gone' });
  });
  it("hands each start its own deployment's rootDirectory, on every attempt; never another application's", async () => {
    const [monorepo, plain] = [await scratch.application(await scratch.owner()), await scratch.application(await scratch.owner())];
    const withRoot = asDeploymentId(randomUUID());
    await repository.insertQueued(
      monorepo,
      { id: withRoot, sourceKey: `sources/${withRoot}.tar`, sourceBytes: 1, rootDirectory: 'apps/web', deadlineAt: new Date(Date.now() + 3_600_000) },
      100,
    );
    const without = await queue(plain, 0);
    const fifo: StartRules = { ...ONE_SLOT, order: 'fifo' };
    // Another application naming this deployment gets nothing of it.
    expect(await repository.queue.tryStart(plain, withRoot, fifo)).toEqual({ kind: 'gone' });
    expect(await repository.queue.tryStart(monorepo, withRoot, fifo)).toMatchObject({ kind: 'started', attempt: 1, rootDirectory: 'apps/web' });
    expect(await repository.queue.tryStart(plain, without, fifo)).toMatchObject({ kind: 'started', attempt: 1, rootDirectory: null });
    // A second attempt (a worker lost, the task handed over) builds the same directory.
    expect(await repository.queue.tryStart(monorepo, withRoot, fifo)).toMatchObject({ kind: 'started', attempt: 2, rootDirectory: 'apps/web' });
  });
});
