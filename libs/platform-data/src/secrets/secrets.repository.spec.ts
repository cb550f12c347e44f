import { createTestDatabase, type TestDatabase } from '@slipway/testing';
import { asApplicationId, type ApplicationId } from '../ids.js';
import { PlatformInfrastructure } from '../infrastructure.js';
import { SecretsRepository, TooManySecretsError } from './secrets.repository.js';

describe('SecretsRepository (real Postgres)', () => {
  let db: TestDatabase;
  let platform: PlatformInfrastructure;
  let secrets: SecretsRepository;

  beforeAll(async () => {
    db = await createTestDatabase('pd-secrets');
    platform = PlatformInfrastructure.open({ DATABASE_URL: db.url }, { poolSize: 3 });
    secrets = new SecretsRepository(platform);
  });
  afterAll(async () => {
    await platform.close();
    await db.drop();
  });

  let n = 0;
  async function application(): Promise<ApplicationId> {
    n++;
    const owner = await platform.prisma.owner.create({ data: { email: `secrets${n}@example.com` } });
    const app = await platform.prisma.application.create({ data: { ownerId: owner.id, name: `a${n}`, slug: `secrets-${n}` } });
    return asApplicationId(app.id);
  }
  const sealed = (text: string) => new Uint8Array(Buffer.from(text));

  it('sets, replaces and deletes in one go and answers the names now set, in order', async () => {
    const app = await application();
    expect(await secrets.apply(app, new Map([['B', sealed('1')], ['A', sealed('2')]]), [], 10)).toEqual(['A', 'B']);
    expect(await secrets.apply(app, new Map([['A', sealed('3')]]), ['B'], 10)).toEqual(['A']);
    expect(await secrets.names(app)).toEqual(['A']);
    expect(await secrets.envelopes(app)).toEqual([{ name: 'A', value: Buffer.from('3') }]);
  });

  it('rolls everything back past the limit', async () => {
    const app = await application();
    await secrets.apply(app, new Map([['A', sealed('1')]]), [], 2);
    await expect(secrets.apply(app, new Map([['B', sealed('2')], ['C', sealed('3')]]), ['A'], 1)).rejects.toBeInstanceOf(TooManySecretsError);
    expect(await secrets.names(app)).toEqual(['A']);
  });

  it("reads one application's secrets only", async () => {
    const mine = await application();
    const theirs = await application();
    await secrets.apply(theirs, new Map([['THEIRS', sealed('x')]]), [], 10);
    expect(await secrets.names(mine)).toEqual([]);
    expect(await secrets.envelopes(mine)).toEqual([]);
  });
});
