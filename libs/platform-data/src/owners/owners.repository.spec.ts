import { scratchPlatform } from '../../test/scratch-platform.js';
import { SlugTakenError } from '../applications/applications.repository.js';
import type { PlatformData } from '../platform-data.module.js';
import { EmailTakenError } from './owners.repository.js';

describe('OwnersRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-owners', { poolSize: 2 });
  let data: PlatformData;
  const issued = (n: number) => ({ apiKey: { prefix: `k${n}`, hash: `kh${n}` }, personalAccessToken: { prefix: `p${n}`, hash: `ph${n}` } });
  beforeAll(() => {
    data = scratch.data;
  });

  it('bootstraps owner, application and credentials, reuses them, and the first sign-up claims the owner', async () => {
    const first = await data.owners.bootstrapAccount({ email: 'ada@example.com', appName: 'Shop', slugCandidates: ['shop'], ...issued(1) });
    expect(first).toMatchObject({ owner: { plan: 'free', created: true }, application: { slug: 'shop', created: true } });
    const again = await data.owners.bootstrapAccount({ email: 'ada@example.com', plan: 'pro', appName: 'Shop', slugCandidates: ['shop'], ...issued(2) });
    expect(again).toEqual({
      owner: { id: first.owner.id, plan: 'pro', created: false },
      application: { id: first.application.id, slug: 'shop', created: false },
    });
    const prisma = data.infrastructure.prisma;
    expect(await prisma.apiKey.count({ where: { applicationId: first.application.id } })).toBe(2);
    expect(await prisma.personalAccessToken.count({ where: { ownerId: first.owner.id } })).toBe(2);

    // Every candidate taken: nothing of the run is left behind.
    await expect(data.owners.bootstrapAccount({ email: 'linus@example.com', appName: 'Shop', slugCandidates: ['shop'], ...issued(3) })).rejects.toBeInstanceOf(
      SlugTakenError,
    );
    expect(await data.owners.findByEmail('linus@example.com')).toBeNull();

    const claimed = await data.owners.create('ada@example.com', 'Ada', 'hash');
    expect(claimed).toEqual({ id: first.owner.id, email: 'ada@example.com', name: 'Ada', plan: 'pro', passwordHash: 'hash' });
    await expect(data.owners.create('ada@example.com', null, 'other')).rejects.toBeInstanceOf(EmailTakenError);
  });

  it('keeps sessions by token hash until they expire', async () => {
    const owner = await data.owners.create('grace@example.com', null, 'hash');
    const now = new Date();
    await data.owners.sessions.create(owner.id, 'live', new Date(now.getTime() + 60_000));
    await data.owners.sessions.create(owner.id, 'old', new Date(now.getTime() - 1));
    const live = await data.owners.sessions.findLive('live', now);
    expect(live).toMatchObject({ id: owner.id, email: 'grace@example.com', plan: 'free', sessionId: expect.any(String) });
    expect(await data.owners.sessions.findLive('old', now)).toBeNull();
    await data.owners.sessions.deleteExpired(owner.id, now);
    expect(await data.infrastructure.prisma.ownerSession.count({ where: { ownerId: owner.id } })).toBe(1);
    await data.owners.sessions.delete(owner.id, live!.sessionId);
    expect(await data.owners.sessions.findLive('live', now)).toBeNull();
  });
});
