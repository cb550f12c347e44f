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
    releaseId = (
      await prisma.release.create({
        data: { applicationId, deploymentId: deployment.id, kind: 'node', artifactKey: 'releases/r.tar.gz', spec: { commands: { start: 'node server.js' } } },
      })
    ).id;
    await prisma.application.update({ where: { id: applicationId }, data: { liveReleaseId: releaseId } });
    await prisma.domain.createMany({
      data: [
        { applicationId, hostname: 'WWW.Example.com', verificationToken: 't1', verifiedAt: new Date() },
        { applicationId, hostname: 'claimed.example.com', verificationToken: 't2' },
      ],
    });
    await prisma.secret.create({ data: { applicationId, name: 'API_KEY', value: Buffer.from('sealed') } });
    await prisma.signInService.create({ data: { applicationId, cookieSecret: Buffer.from('cookie') } });
    await prisma.applicationDatabase.create({ data: { applicationId, ownerId, databaseName: 'app_db', roleName: 'app_role', password: Buffer.from('pw') } });
  });

  it('routes by slug and verified domains only, to the live release', async () => {
    const all = (await repository.liveRoutes.routes()).filter((r) => [applicationId, bareId].includes(asApplicationId(r.applicationId)));
    expect(all).toHaveLength(2);
    expect(await repository.liveRoutes.routes(applicationId)).toEqual([
      {
        applicationId,
        slug: 'routed',
        hostnames: ['www.example.com'],
        release: { id: releaseId, kind: 'node', artifactKey: 'releases/r.tar.gz', spec: { commands: { start: 'node server.js' } } },
      },
    ]);
    expect(await repository.liveRoutes.routes(bareId)).toEqual([{ applicationId: bareId, slug: 'bare', hostnames: [], release: null }]);
    expect(await repository.liveRoutes.routes(asApplicationId(randomUUID()))).toEqual([]);
  });

  it("reads a release's route, live or not, in one query: its application's slug and verified domains with that release in it", async () => {
    const deployment = await scratch.platform.prisma.deployment.create({ data: { applicationId, status: 'releasing' } });
    const next = await scratch.platform.prisma.release.create({
      data: { applicationId, deploymentId: deployment.id, kind: 'static', artifactKey: 'releases/next.tar.gz', spec: { spaFallback: true } },
    });
    expect(await repository.liveRoutes.routeTo(asReleaseId(next.id))).toEqual({
      applicationId,
      slug: 'routed',
      hostnames: ['www.example.com'],
      release: { id: next.id, kind: 'static', artifactKey: 'releases/next.tar.gz', spec: { spaFallback: true } },
    });
    expect(await repository.liveRoutes.routeTo(asReleaseId(releaseId))).toMatchObject({ applicationId, release: { id: releaseId, kind: 'node' } });
    expect(await repository.liveRoutes.routeTo(asReleaseId(randomUUID()))).toBeNull();
  });

  it('reads any release with its application', async () => {
    expect(await repository.liveRoutes.release(asReleaseId(releaseId))).toMatchObject({ id: releaseId, kind: 'node', applicationId, slug: 'routed' });
    expect(await repository.liveRoutes.release(asReleaseId(randomUUID()))).toBeNull();
  });

  it('gives a build and a running release the same envelopes, unopened', async () => {
    const expected = {
      sealedFor: applicationId,
      slug: 'routed',
      environment: 'production',
      secrets: [{ name: 'API_KEY', scope: 'all', value: Buffer.from('sealed') }],
      cookieSecret: Buffer.from('cookie'),
      database: { databaseName: 'app_db', roleName: 'app_role', password: Buffer.from('pw') },
    };
    expect(await repository.inputs.forBuild(applicationId)).toEqual(expected);
    expect(await repository.inputs.forRuntime(applicationId)).toEqual(expected);
    expect(await repository.inputs.forRuntime(bareId)).toEqual({
      sealedFor: bareId,
      slug: 'bare',
      environment: 'production',
      secrets: [],
      cookieSecret: null,
      database: null,
    });
    expect(await repository.inputs.forRuntime(asApplicationId(randomUUID()))).toBeNull();
    await expect(repository.inputs.forBuild(asApplicationId(randomUUID()))).rejects.toThrow();
  });

  it("gives a preview its parent's envelopes: the preview scope of its secrets, its sign-in service and database", async () => {
    const prisma = scratch.platform.prisma;
    await prisma.secret.create({ data: { applicationId, name: 'API_KEY', scope: 'preview', value: Buffer.from('sealed-preview') } });
    await prisma.secret.create({ data: { applicationId, name: 'PROD_ONLY', scope: 'production', value: Buffer.from('sealed-prod') } });
    const preview = await scratch.data.applications.previews.ensure(applicationId, 'feat', 3_600_000, 10);
    expect(preview).toMatchObject({ name: 'feat', slug: 'routed--feat', liveReleaseId: null });
    const inputs = await repository.inputs.forRuntime(preview.id);
    expect(inputs).toEqual({
      sealedFor: applicationId,
      slug: 'routed',
      environment: 'preview',
      secrets: [{ name: 'API_KEY', scope: 'preview', value: Buffer.from('sealed-preview') }],
      cookieSecret: Buffer.from('cookie'),
      database: { databaseName: 'app_db', roleName: 'app_role', password: Buffer.from('pw') },
    });
    // Production keeps its own: the `all` value of API_KEY and its production-only one.
    expect((await repository.inputs.forRuntime(applicationId))!.secrets).toEqual([
      { name: 'API_KEY', scope: 'all', value: Buffer.from('sealed') },
      { name: 'PROD_ONLY', scope: 'production', value: Buffer.from('sealed-prod') },
    ]);
    // A preview routes at its own address like any application.
    expect(await repository.liveRoutes.routes(preview.id)).toEqual([{ applicationId: preview.id, slug: 'routed--feat', hostnames: [], release: null }]);
    await prisma.secret.deleteMany({ where: { applicationId, scope: { not: 'all' } } });
    expect(await scratch.data.applications.previews.remove(applicationId, preview.id)).toMatchObject({ id: preview.id, slug: 'routed--feat', blobKeys: [] });
  });
});
