import { randomUUID } from 'node:crypto';
import { scratchPlatform } from '../../test/scratch-platform.js';
import { asApplicationId, asReleaseId, type ApplicationId } from '../ids.js';
import type { DeploymentsRepository } from './deployments.repository.js';

describe('DeploymentsRepository: the edge routes and what builds and releases are given (real Postgres)', () => {
  const scratch = scratchPlatform('liveroutes', { poolSize: 4 });
  let repository: DeploymentsRepository;
  let applicationId: ApplicationId;
  let bareId: ApplicationId;
  let releaseId: string;
  beforeAll(async () => {
    repository = scratch.data.deployments;
    const prisma = scratch.platform.prisma;
    const ownerId = await scratch.owner();
    applicationId = await scratch.application(ownerId, 'routed');
    bareId = await scratch.application(ownerId, 'bare');
    const deployment = await prisma.deployment.create({ data: { applicationId, status: 'succeeded' } });
    releaseId = (await prisma.release.create({ data: { applicationId, deploymentId: deployment.id, kind: 'node', artifactKey: 'releases/r.tar.gz', spec: { commands: { start: 'node server.js' } } } })).id;
    await prisma.application.update({ where: { id: applicationId }, data: { liveReleaseId: releaseId } });
    await prisma.domain.createMany({ data: [
      { applicationId, hostname: 'WWW.Example.com', verificationToken: 't1', verifiedAt: new Date() },
      { applicationId, hostname: 'claimed.example.com', verificationToken: 't2' },
    ] });
    await prisma.secret.create({ data: { applicationId, name: 'API_KEY', value: Buffer.from('sealed') } });
    await prisma.signInService.create({ data: { applicationId, cookieSecret: Buffer.from('cookie') } });
    await prisma.applicationDatabase.create({ data: { applicationId, ownerId, databaseName: 'app_db', roleName: 'app_role', password: Buffer.from('pw') } });
  });

  it('routes by slug and verified domains only, to the live release', async () => {
    const all = await repository.liveRoutes.routes();
    expect(all).toHaveLength(2);
    expect(await repository.liveRoutes.routes(applicationId)).toEqual([
      { applicationId, slug: 'routed', hostnames: ['www.example.com'], release: { id: releaseId, kind: 'node', artifactKey: 'releases/r.tar.gz', spec: { commands: { start: 'node server.js' } } } },
    ]);
    expect(await repository.liveRoutes.routes(bareId)).toEqual([{ applicationId: bareId, slug: 'bare', hostnames: [], release: null }]);
    expect(await repository.liveRoutes.routes(asApplicationId(randomUUID()))).toEqual([]);
  });

  it('reads any release with its application', async () => {
    expect(await repository.liveRoutes.release(asReleaseId(releaseId))).toMatchObject({ id: releaseId, kind: 'node', applicationId, slug: 'routed' });
    expect(await repository.liveRoutes.release(asReleaseId(randomUUID()))).toBeNull();
  });

  it('gives a build and a running release the same envelopes, unopened', async () => {
    const expected = { secrets: [{ name: 'API_KEY', value: Buffer.from('sealed') }], cookieSecret: Buffer.from('cookie'), database: { databaseName: 'app_db', roleName: 'app_role', password: Buffer.from('pw') } };
    expect(await repository.inputs.forBuild(applicationId)).toEqual({ slug: 'routed', ...expected });
    expect(await repository.inputs.forRuntime(applicationId)).toEqual(expected);
    expect(await repository.inputs.forRuntime(bareId)).toEqual({ secrets: [], cookieSecret: null, database: null });
    await expect(repository.inputs.forBuild(asApplicationId(randomUUID()))).rejects.toThrow();
  });
});
