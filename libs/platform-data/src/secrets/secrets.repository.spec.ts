import { scratchPlatform } from '../../test/scratch-platform.js';
import { TooManySecretsError, type SecretsRepository } from './secrets.repository.js';

describe('SecretsRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-secrets', { poolSize: 3 });
  let secrets: SecretsRepository;
  beforeAll(() => {
    secrets = scratch.data.secrets;
  });
  const application = () => scratch.application();
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
