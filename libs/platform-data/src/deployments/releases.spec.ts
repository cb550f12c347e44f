import { pendingSteps } from '@slipway/contract';
import { randomUUID } from 'node:crypto';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asDeploymentId, asReleaseId, type ApplicationId, type DeploymentId, type ReleaseId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import type { DeploymentsRepository } from './deployments.repository.js';

describe('DeploymentsRepository: an attempt, its release and a rollback (real Postgres)', () => {
  const scratch = scratchPlatform('deployreleases', { poolSize: 4 });
  let platform: PlatformInfrastructure;
  let repository: DeploymentsRepository;
  let applicationId: ApplicationId;
  let otherId: ApplicationId;
  beforeAll(async () => {
    ({
      platform,
      data: { deployments: repository },
    } = scratch);
    const owner = await scratch.owner();
    applicationId = await scratch.application(owner, 'rel-app');
    otherId = await scratch.application(owner, 'rel-other');
  });

  const queued = async (app: ApplicationId): Promise<DeploymentId> => {
    const id = asDeploymentId(randomUUID());
    await repository.insertQueued(app, { id, sourceKey: `sources/${id}.tar`, sourceBytes: 1, deadlineAt: new Date(Date.now() + 60_000) }, 100);
    return id;
  };
  const row = (id: DeploymentId) => platform.prisma.deployment.findUniqueOrThrow({ where: { id } });

  it('fences every write of an attempt once a later attempt claimed the deployment', async () => {
    const id = await queued(applicationId);
    expect(await repository.claim(otherId, id)).toBeNull();
    const first = await repository.claim(applicationId, id);
    expect(first).toEqual({ attempt: 1, sourceKey: `sources/${id}.tar` });
    const second = await repository.claim(applicationId, id);
    expect(second?.attempt).toBe(2);
    const steps = pendingSteps();
    expect(await repository.save(applicationId, id, 1, steps, { spec: { kind: 'static' } })).toBe(false);
    expect(await repository.save(applicationId, id, 2, steps, { spec: { kind: 'static' }, warnings: [{ code: 'w' }] })).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'building', spec: { kind: 'static' }, warnings: [{ code: 'w' }] });
    expect(await repository.handBack(applicationId, id, 2, steps)).toBe(true);
    expect((await row(id)).status).toBe('queued');
    const third = await repository.claim(applicationId, id);
    const error = { code: 'build_failed' as const, message: 'no', step: 'build' as const };
    expect(await repository.fail(applicationId, id, 2, steps, error)).toBe(false);
    expect(await repository.fail(applicationId, id, third!.attempt, steps, error, { hazards: [] })).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'failed', error });
    expect(await repository.claim(applicationId, id)).toBeNull();
  });

  it('lets the reconciler see and fail an active deployment, whoever holds it', async () => {
    const id = await queued(otherId);
    await repository.claim(otherId, id);
    const running = pendingSteps().map((s, i) => (i === 0 ? { ...s, status: 'running' as const } : s));
    await repository.save(otherId, id, 1, running);
    expect((await repository.active()).map((d) => d.id)).toContain(id);
    expect(await repository.failActive(otherId, id, { code: 'deadline_exceeded', message: 'late', step: null })).toBe(true);
    const failed = await row(id);
    expect(failed.status).toBe('failed');
    expect((failed.steps as { status: string }[]).map((s) => s.status)).toEqual(['failed', ...Array(6).fill('skipped')]);
    expect(await repository.failActive(otherId, id, { code: 'deadline_exceeded', message: 'late', step: null })).toBe(false);
    expect((await repository.active()).map((d) => d.id)).not.toContain(id);
  });

  it('stores a release, commits it live with the deployment, lists it and rolls back to an earlier one', async () => {
    const releaseIds: ReleaseId[] = [];
    for (const n of [1, 2]) {
      const id = await queued(applicationId);
      const { attempt } = (await repository.claim(applicationId, id))!;
      const release = { id: asReleaseId(randomUUID()), kind: 'static', artifactKey: `releases/${n}.tar.gz`, artifactBytes: 10, spec: { kind: 'static' } };
      expect(await repository.releases.create(applicationId, id, attempt, release)).toBe(false);
      expect(await repository.save(applicationId, id, attempt, pendingSteps(), { status: 'releasing' })).toBe(true);
      expect(await repository.releases.create(applicationId, id, attempt + 1, release)).toBe(false);
      expect(await repository.releases.create(applicationId, id, attempt, release)).toBe(true);
      expect(await repository.releases.commitLive(applicationId, id, attempt + 1, release.id, pendingSteps())).toBe(false);
      expect(await repository.releases.commitLive(applicationId, id, attempt, release.id, pendingSteps())).toBe(true);
      expect(await row(id)).toMatchObject({ status: 'succeeded', error: null });
      releaseIds.push(release.id);
    }
    const [older, newer] = releaseIds as [ReleaseId, ReleaseId];
    expect((await repository.releases.list(applicationId)).map((r) => [r.id, r.live])).toEqual([
      [newer, true],
      [older, false],
    ]);
    expect(await repository.releases.switchLive(otherId, older)).toBe(false);
    expect(await repository.releases.switchLive(applicationId, asReleaseId(randomUUID()))).toBe(false);
    expect(await repository.releases.switchLive(applicationId, older)).toBe(true);
    expect((await repository.releases.list(applicationId)).map((r) => [r.id, r.live])).toEqual([
      [newer, false],
      [older, true],
    ]);
    const history = await repository.list(applicationId);
    expect(history.slice(0, 2).map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
    expect(await repository.findForApplication(otherId, asDeploymentId(history[0]!.id))).toBeNull();
    expect(await repository.findForApplication(applicationId, asDeploymentId(history[0]!.id))).toMatchObject({
      status: 'succeeded',
      application: { slug: 'rel-app' },
    });
  });
  it('puts late hazards on the deployment of a release, keeps the others and its status, replaces its own codes, and only for its application', async () => {
    const id = await queued(applicationId);
    const { attempt } = (await repository.claim(applicationId, id))!;
    await repository.save(applicationId, id, attempt, pendingSteps(), { status: 'releasing', hazards: [{ code: 'unsandboxed_runtime' }] });
    const release = { id: asReleaseId(randomUUID()), kind: 'node', artifactKey: 'releases/late.tar.gz', artifactBytes: 10, spec: { kind: 'node' } };
    expect(await repository.releases.create(applicationId, id, attempt, release)).toBe(true);
    expect(await repository.releases.commitLive(applicationId, id, attempt, release.id, pendingSteps())).toBe(true);
    expect(await repository.releases.addLateHazards(otherId, release.id, [{ code: 'runtime_5xx' }])).toBe(false);
    expect(await repository.releases.addLateHazards(applicationId, release.id, [{ code: 'runtime_5xx', count: 3 }])).toBe(true);
    expect(await repository.releases.addLateHazards(applicationId, release.id, [{ code: 'runtime_5xx', count: 4 }, { code: 'runtime_crashed' }])).toBe(true);
    expect(await row(id)).toMatchObject({
      status: 'succeeded',
      hazards: [{ code: 'unsandboxed_runtime' }, { code: 'runtime_5xx', count: 4 }, { code: 'runtime_crashed' }],
    });
  });
});
