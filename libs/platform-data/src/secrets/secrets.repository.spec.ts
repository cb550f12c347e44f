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
    expect(
      await secrets.apply(
        app,
        new Map([
          ['B', sealed('1')],
          ['A', sealed('2')],
        ]),
        [],
        10,
      ),
    ).toEqual(['A', 'B']);
    expect(await secrets.apply(app, new Map([['A', sealed('3')]]), ['B'], 10)).toEqual(['A']);
    expect(await secrets.names(app)).toEqual(['A']);
    expect(await secrets.envelopes(app)).toEqual([{ name: 'A', scope: 'all', value: Buffer.from('3') }]);
  });

  it("gives each environment its own value over the one for both; deleting in `all` removes every scope's", async () => {
    const app = await application();
    await secrets.apply(
      app,
      new Map([
        ['A', sealed('both')],
        ['B', sealed('both-b')],
      ]),
      [],
      10,
    );
    await secrets.apply(app, new Map([['A', sealed('preview')]]), [], 10, 'preview');
    await secrets.apply(app, new Map([['C', sealed('prod')]]), [], 10, 'production');
    expect(await secrets.names(app)).toEqual(['A', 'B', 'C']);
    expect(await secrets.scopes(app)).toEqual([
      { name: 'A', scope: 'all' },
      { name: 'A', scope: 'preview' },
      { name: 'B', scope: 'all' },
      { name: 'C', scope: 'production' },
    ]);
    const text = (rows: { name: string; value: Buffer }[]) => Object.fromEntries(rows.map((r) => [r.name, r.value.toString()]));
    expect(text(await secrets.envelopes(app, 'preview'))).toEqual({ A: 'preview', B: 'both-b' });
    expect(text(await secrets.envelopes(app, 'production'))).toEqual({ A: 'both', B: 'both-b', C: 'prod' });
    // A scoped delete removes that environment's value only; a delete in `all` removes the name everywhere.
    await secrets.apply(app, new Map(), ['A'], 10, 'preview');
    expect(text(await secrets.envelopes(app, 'preview'))).toEqual({ A: 'both', B: 'both-b' });
    await secrets.apply(app, new Map([['B', sealed('preview-b')]]), [], 10, 'preview');
    await secrets.apply(app, new Map(), ['B'], 10);
    expect(await secrets.scopes(app)).toEqual([
      { name: 'A', scope: 'all' },
      { name: 'C', scope: 'production' },
    ]);
  });

  it('rolls everything back past the limit', async () => {
    const app = await application();
    await secrets.apply(app, new Map([['A', sealed('1')]]), [], 2);
    await expect(
      secrets.apply(
        app,
        new Map([
          ['B', sealed('2')],
          ['C', sealed('3')],
        ]),
        ['A'],
        1,
      ),
    ).rejects.toBeInstanceOf(TooManySecretsError);
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
