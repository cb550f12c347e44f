import { randomUUID } from 'node:crypto';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asDeploymentId, type ApplicationId } from '../ids.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { ActiveDeployExistsError, HourlyLimitReachedError, type DeploymentsRepository } from './deployments.repository.js';

describe('DeploymentsRepository (real Postgres)', () => {
  const scratch = scratchPlatform('deployrepo', { poolSize: 4 });
  let platform: PlatformInfrastructure;
  let repository: DeploymentsRepository;
  let applicationId: ApplicationId;
  beforeAll(async () => {
    ({
      platform,
      data: { deployments: repository },
    } = scratch);
    applicationId = await scratch.application(undefined, 'repo-app');
  });
  const row = () => ({ id: asDeploymentId(randomUUID()), sourceKey: 'sources/x.tar', sourceBytes: 10, deadlineAt: new Date(Date.now() + 60_000) });

  it('lets the partial unique index refuse a second active deploy, even without any read first', async () => {
    const first = row();
    await repository.insertQueued(applicationId, first, 20);
    await expect(repository.insertQueued(applicationId, row(), 20)).rejects.toBeInstanceOf(ActiveDeployExistsError);
    expect(await repository.admissionState(applicationId)).toMatchObject({ activeId: first.id, recentCreatedAtMs: [expect.any(Number)] });
    const results = await Promise.allSettled([row(), row(), row()].map((r) => repository.insertQueued(applicationId, r, 20)));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof ActiveDeployExistsError)).toBe(true);
    await platform.prisma.deployment.updateMany({ where: { applicationId }, data: { status: 'succeeded' } });
  });

  it('refuses the insert once the hourly limit is reached', async () => {
    await repository.insertQueued(applicationId, row(), 3);
    await platform.prisma.deployment.updateMany({ where: { applicationId }, data: { status: 'failed' } });
    await expect(repository.insertQueued(applicationId, row(), 2)).rejects.toBeInstanceOf(HourlyLimitReachedError);
    expect(await platform.prisma.deployment.count({ where: { applicationId } })).toBe(2);
  });
  it('stores the rootDirectory given, and the database refuses one that is not a relative directory whoever writes it', async () => {
    const app = await scratch.application(undefined, 'repo-root');
    const given = { ...row(), rootDirectory: 'apps/web' };
    await repository.insertQueued(app, given, 20);
    expect(await platform.prisma.deployment.findUnique({ where: { id: given.id }, select: { rootDirectory: true } })).toEqual({ rootDirectory: 'apps/web' });
    await platform.prisma.deployment.updateMany({ where: { applicationId: app }, data: { status: 'succeeded' } });
    for (const rootDirectory of ['../etc', 'apps/../..', '/srv', '.', 'apps//web', 'apps/web/', 'a b', 'a'.repeat(201)]) {
      await expect(repository.insertQueued(app, { ...row(), rootDirectory }, 20)).rejects.toMatchObject({
        code: '23514',
        constraint: 'deployments_root_directory_relative',
      });
    }
    expect(await platform.prisma.deployment.count({ where: { applicationId: app } })).toBe(1);
  });
});
