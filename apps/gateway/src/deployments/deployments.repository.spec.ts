import { createPrismaClient } from '@slipway/db';
import { createTestDatabase, type TestDatabase } from '@slipway/testing';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PrismaService } from '../common/prisma.service.js';
import { ActiveDeployExistsError, DeploymentsRepository, HourlyLimitReachedError } from './deployments.repository.js';

describe('DeploymentsRepository (real Postgres)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let prisma: ReturnType<typeof createPrismaClient>;
  let repository: DeploymentsRepository;
  let applicationId: string;
  beforeAll(async () => {
    db = await createTestDatabase('deployrepo');
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    prisma = createPrismaClient(db.url, { pool });
    repository = new DeploymentsRepository({ client: prisma, pool } as PrismaService);
    const owner = await prisma.owner.create({ data: { email: 'repo@example.com' } });
    applicationId = (await prisma.application.create({ data: { ownerId: owner.id, name: 'r', slug: 'repo-app' } })).id;
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await pool.end();
    await db.drop();
  });
  const row = () => ({ id: randomUUID(), sourceKey: 'sources/x.tar', sourceBytes: 10, deadlineAt: new Date(Date.now() + 60_000) });

  it('lets the partial unique index refuse a second active deploy, even without any read first', async () => {
    const first = row();
    await repository.insertQueued(applicationId, first, 20);
    await expect(repository.insertQueued(applicationId, row(), 20)).rejects.toBeInstanceOf(ActiveDeployExistsError);
    expect(await repository.admissionState(applicationId)).toMatchObject({ activeId: first.id, recentCreatedAtMs: [expect.any(Number)] });
    const results = await Promise.allSettled([row(), row(), row()].map((r) => repository.insertQueued(applicationId, r, 20)));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof ActiveDeployExistsError)).toBe(true);
    await prisma.deployment.updateMany({ where: { applicationId }, data: { status: 'succeeded' } });
  });

  it('refuses the insert once the hourly limit is reached', async () => {
    await repository.insertQueued(applicationId, row(), 3);
    await prisma.deployment.updateMany({ where: { applicationId }, data: { status: 'failed' } });
    await expect(repository.insertQueued(applicationId, row(), 2)).rejects.toBeInstanceOf(HourlyLimitReachedError);
    expect(await prisma.deployment.count({ where: { applicationId } })).toBe(2);
  });
});
