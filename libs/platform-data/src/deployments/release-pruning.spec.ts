import { randomUUID } from 'node:crypto';
import { pendingSteps } from '@slipway/contract';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asDeploymentId, asReleaseId, type ApplicationId, type DeploymentId, type ReleaseId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import type { DeploymentsRepository } from './deployments.repository.js';

describe('Releases.prune and stored bytes (real Postgres)', () => {
  const scratch = scratchPlatform('releaseprune', { poolSize: 6 });
  let platform: PlatformInfrastructure;
  let repository: DeploymentsRepository;
  beforeAll(() => {
    ({
      platform,
      data: { deployments: repository },
    } = scratch);
  });

  /** A deployment taken through the worker's calls to `status`, its release stored (and live when it succeeded). */
  const release = async (
    app: ApplicationId,
    status: 'succeeded' | 'failed' | 'releasing',
    bytes = 100,
  ): Promise<{ deployment: DeploymentId; release: ReleaseId }> => {
    const deployment = asDeploymentId(randomUUID());
    await repository.insertQueued(
      app,
      { id: deployment, sourceKey: `sources/${deployment}.tar.gz`, sourceBytes: 10, deadlineAt: new Date(Date.now() + 60_000) },
      1000,
    );
    const { attempt } = (await repository.claim(app, deployment))!;
    await repository.save(app, deployment, attempt, pendingSteps(), { status: 'releasing' });
    const id = asReleaseId(randomUUID());
    expect(
      await repository.releases.create(app, deployment, attempt, { id, kind: 'static', artifactKey: `releases/${id}.tar.gz`, artifactBytes: bytes, spec: {} }),
    ).toBe(true);
    if (status === 'succeeded') expect(await repository.releases.commitLive(app, deployment, attempt, id, pendingSteps())).toBe(true);
    if (status === 'failed')
      expect(await repository.fail(app, deployment, attempt, pendingSteps(), { code: 'release_unhealthy', message: 'x', step: 'release' })).toBe(true);
    return { deployment, release: id };
  };
  const ids = async (app: ApplicationId) =>
    (await platform.prisma.release.findMany({ where: { applicationId: app }, orderBy: { createdAt: 'asc' }, select: { id: true } })).map((r) => r.id);

  it('keeps the newest `keep` releases of succeeded deployments and the live one; removes failed ones; never one in progress', async () => {
    const app = await scratch.application();
    const r = [];
    for (let n = 0; n < 4; n += 1) r.push((await release(app, 'succeeded')).release);
    const failed = (await release(app, 'failed')).release;
    // Rolled back to the oldest: it is live, so it stays although it is not among the newest.
    expect(await repository.releases.switchLive(app, r[0]!)).toBe(true);
    const inProgress = (await release(app, 'releasing')).release;

    const removed = await repository.releases.prune(app, 2);
    expect(removed.map((x) => x.id).sort()).toEqual([r[1]!, failed].sort());
    expect(removed.find((x) => x.id === failed)).toEqual({ id: failed, artifactKey: `releases/${failed}.tar.gz` });
    expect(await ids(app)).toEqual([r[0], r[2], r[3], inProgress]);
    // Idempotent: nothing more to remove.
    expect(await repository.releases.prune(app, 2)).toEqual([]);
    // A pruned release can no longer be rolled back to.
    expect(await repository.releases.switchLive(app, r[1]!)).toBe(false);
  });

  it('several workers pruning at once remove each release once; a rollback racing a prune never leaves a pruned release live', async () => {
    const app = await scratch.application();
    const r = [];
    for (let n = 0; n < 6; n += 1) r.push((await release(app, 'succeeded')).release);
    // r[0] is pruned by keep=2 unless the rollback wins the application's lock first: either way
    // the live release exists afterwards, and no release is removed twice.
    const [a, b, rollback] = await Promise.all([
      repository.releases.prune(app, 2),
      repository.releases.prune(app, 2),
      repository.releases.switchLive(app, r[0]!),
    ]);
    const removed = [...a, ...b].map((x) => x.id);
    expect(new Set(removed).size).toBe(removed.length);
    const live = (await platform.prisma.application.findUniqueOrThrow({ where: { id: app }, select: { liveReleaseId: true } })).liveReleaseId;
    expect(live).not.toBeNull();
    expect(await ids(app)).toContain(live);
    if (rollback) {
      expect(live).toBe(r[0]);
      expect(removed.sort()).toEqual([r[1], r[2], r[3]].sort());
    } else {
      expect(live).toBe(r[5]);
      expect(removed.sort()).toEqual([r[0], r[1], r[2], r[3]].sort());
    }
  });

  it("counts what an owner stores: sources of deployments in progress and kept releases' artifacts, across its applications", async () => {
    const owner = await scratch.owner();
    const [one, two] = [await scratch.application(owner), await scratch.application(owner)];
    await release(one, 'succeeded', 1000);
    await release(two, 'succeeded', 2000);
    const running = asDeploymentId(randomUUID());
    await repository.insertQueued(
      two,
      { id: running, sourceKey: `sources/${running}.tar.gz`, sourceBytes: 300, deadlineAt: new Date(Date.now() + 60_000) },
      1000,
    );
    // The succeeded ones' sources (10 bytes each) are still recorded until the worker forgets them.
    expect(await repository.storage.ofOwnerOf(one)).toEqual({ ownerId: owner, plan: 'free', sourcesBytes: 320, artifactsBytes: 3000 });
    const ended = await repository.storage.endedSources(100);
    for (const source of ended.filter((s) => s.applicationId === one || s.applicationId === two)) {
      expect(await repository.storage.endedSourceKey(source.applicationId, source.deploymentId)).toBe(source.sourceKey);
      await repository.storage.forgetEndedSource(source.applicationId, source.deploymentId);
    }
    // The queued one is not ended: its source stays.
    expect(await repository.storage.endedSourceKey(two, running)).toBeNull();
    await repository.storage.forgetEndedSource(two, running);
    expect(await repository.storage.ofOwnerOf(two)).toEqual({ ownerId: owner, plan: 'free', sourcesBytes: 300, artifactsBytes: 3000 });
    expect(await repository.storage.ofApplication(two)).toEqual({ sources: { count: 1, bytes: 300 }, releases: { count: 1, bytes: 2000 } });
  });
});
