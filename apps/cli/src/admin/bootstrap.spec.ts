import { PassThrough } from 'node:stream';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@slipway/testing';
import { sha256Hex } from '@slipway/crypto';
import { run } from '../run.js';

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += c));
  err.on('data', (c) => (stderr += c));
  const code = await run(args, env, out, err);
  return { code, stdout, stderr };
}

describe('slipway admin bootstrap (real Postgres)', () => {
  let db: TestDatabase;
  let client: pg.Client;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    db = await createTestDatabase('cli');
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    env = { DATABASE_URL: db.url, SLIPWAY_HOME: '/nonexistent' };
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  it('creates owner, application, key and token, and prints one JSON object', async () => {
    const { code, stdout, stderr } = await cli(['admin', 'bootstrap', '--email', 'Ada@Example.com', '--app', 'My Shop', '--json'], env);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out).sort()).toEqual(['apiKey', 'appUrl', 'applicationId', 'authBaseUrl', 'baseUrl', 'ownerId', 'ownerToken', 'slug']);
    expect(out).toMatchObject({
      slug: 'my-shop',
      baseUrl: 'http://localhost:3000',
      authBaseUrl: 'http://localhost:3001/a/my-shop',
      appUrl: 'http://my-shop.localhost:8080',
      apiKey: expect.stringMatching(/^slw_key_/),
      ownerToken: expect.stringMatching(/^slw_pat_/),
    });
    const owner = await client.query('SELECT email, plan FROM owners WHERE id = $1', [out.ownerId]);
    expect(owner.rows).toEqual([{ email: 'ada@example.com', plan: 'free' }]);
    const key = await client.query('SELECT application_id, key_hash FROM api_keys WHERE key_hash = $1', [sha256Hex(out.apiKey)]);
    expect(key.rows).toEqual([{ application_id: out.applicationId, key_hash: sha256Hex(out.apiKey) }]);
    const plaintext = await client.query(`SELECT count(*)::int AS n FROM api_keys WHERE key_hash = $1 OR prefix = $1`, [out.apiKey]);
    expect(plaintext.rows[0].n).toBe(0);
  });

  it('reuses the owner and application, issues new credentials, and applies --plan', async () => {
    const first = JSON.parse((await cli(['admin', 'bootstrap', '--email', 'grace@example.com', '--app', 'Shop', '--json'], env)).stdout);
    const second = JSON.parse((await cli(['admin', 'bootstrap', '--email', 'grace@example.com', '--app', 'Shop', '--plan', 'pro', '--json'], env)).stdout);
    expect(second.ownerId).toBe(first.ownerId);
    expect(second.applicationId).toBe(first.applicationId);
    expect(second.apiKey).not.toBe(first.apiKey);
    expect((await client.query('SELECT plan FROM owners WHERE id = $1', [first.ownerId])).rows[0].plan).toBe('pro');
    // Another owner's "Shop" gets its own free address.
    const other = JSON.parse((await cli(['admin', 'bootstrap', '--email', 'linus@example.com', '--app', 'Shop', '--json'], env)).stdout);
    expect(other.slug).toBe('shop-2');
  });

  it('exits 2 with one readable line on bad usage', async () => {
    const missing = await cli(['admin', 'bootstrap', '--email', 'x@example.com'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^slipway: --email and --app are required/);
    const badPlan = await cli(['admin', 'bootstrap', '--email', 'x@example.com', '--app', 'a', '--plan', 'gold'], env);
    expect(badPlan).toMatchObject({ code: 2, stderr: 'slipway: --plan must be one of free, go, pro, scale\n' });
    const badEmail = await cli(['admin', 'bootstrap', '--email', 'nope', '--app', 'a'], env);
    expect(badEmail).toMatchObject({ code: 2, stderr: 'slipway: --email: "nope" is not an email address\n' });
    const noDb = await cli(['admin', 'bootstrap', '--email', 'x@example.com', '--app', 'a'], { SLIPWAY_HOME: '/nonexistent' });
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toMatch(/pnpm start/);
  });
});
