import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPlatform, type Bootstrapped, type PlatformUnderTest } from './support/platform.js';

describe('slipway secrets, configuration precedence, auth usage (real binary, real gateway)', () => {
  let platform: PlatformUnderTest;
  let app: Bootstrapped;
  let project: string;
  beforeAll(async () => {
    platform = await startPlatform('cli-secrets');
    app = await platform.bootstrap('Secrets');
    project = await mkdtemp(join(tmpdir(), 'slipway-cli-secrets-'));
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    await rm(project, { recursive: true, force: true });
  });

  it('set, list and unset: names only, values stored sealed and never printed', async () => {
    const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
    const set = await platform.cli(['secrets', 'set', 'DATABASE_URL=postgres://u:p@h/db?x=1', 'STRIPE_KEY=sk_live_abc'], { env });
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(set.stdout)).toEqual({ names: ['DATABASE_URL', 'STRIPE_KEY'] });
    expect(set.stdout).not.toContain('sk_live_abc');

    const stored = await platform.sql.query('SELECT name, value FROM secrets WHERE application_id = $1 ORDER BY name', [app.applicationId]);
    expect(stored.rows.map((r: { name: string }) => r.name)).toEqual(['DATABASE_URL', 'STRIPE_KEY']);
    expect(Buffer.from(stored.rows[1].value).toString('latin1')).not.toContain('sk_live_abc');

    const unset = await platform.cli(['secrets', 'unset', 'STRIPE_KEY'], { env });
    expect(JSON.parse(unset.stdout)).toEqual({ names: ['DATABASE_URL'] });
    const list = await platform.cli(['secrets', 'list'], { env });
    expect(list).toMatchObject({ code: 0, stdout: '{"names":["DATABASE_URL"]}\n' });
  });

  it('refuses bad input before any request (exit 2) without echoing the value', async () => {
    const env = platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey });
    const lower = await platform.cli(['secrets', 'set', 'lower=topsecret'], { env });
    expect(lower).toMatchObject({ code: 2, stderr: 'slipway: not a secret name: "lower" (upper case letters, digits and _, not starting with a digit)\n' });
    const noValue = await platform.cli(['secrets', 'set', 'JUSTANAME'], { env });
    expect(noValue.code).toBe(2);
    expect((await platform.cli(['secrets', 'rotate'], { env })).code).toBe(2);
  });

  it('an oversized value is refused by the platform: one coded line, exit 1', async () => {
    const big = await platform.cli(['secrets', 'set', `BIG=${'x'.repeat(70_000)}`], { env: platform.cliEnv({ SLIPWAY_API_KEY: app.apiKey }) });
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/^slipway: too_large: The value of BIG is larger than \d+ bytes\.\n$/);
  });

  it('flags win over the environment, which wins over .slipway.json', async () => {
    const other = await platform.bootstrap('Secrets Other');
    await writeFile(join(project, '.slipway.json'), JSON.stringify({ url: platform.url, apiKey: other.apiKey }));
    const bare = { PATH: process.env['PATH'] };
    await platform.cli(['secrets', 'set', 'FROM_FILE=1'], { env: bare, cwd: project });
    await platform.cli(['secrets', 'set', 'FROM_ENV=1'], { env: { ...bare, SLIPWAY_API_KEY: app.apiKey }, cwd: project });
    await platform.cli(['secrets', 'set', 'FROM_FLAG=1', '--api-key', other.apiKey], { env: { ...bare, SLIPWAY_API_KEY: app.apiKey }, cwd: project });
    const names = async (applicationId: string) =>
      (await platform.sql.query('SELECT name FROM secrets WHERE application_id = $1 ORDER BY name', [applicationId])).rows.map((r) => r.name);
    expect(await names(other.applicationId)).toEqual(['FROM_FILE', 'FROM_FLAG']);
    expect(await names(app.applicationId)).toContain('FROM_ENV');

    await writeFile(join(project, '.slipway.json'), '{"apiKey": 1}');
    const broken = await platform.cli(['secrets', 'list'], { env: bare, cwd: project });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/\.slipway\.json: apiKey: .*\(allowed: url, apiKey, token, applicationId\)\n$/);
  });

  it('auth commands need an owner token and an application id (exit 2)', async () => {
    const noToken = await platform.cli(['auth', 'enable'], { env: platform.cliEnv() });
    expect(noToken).toMatchObject({ code: 2, stderr: 'slipway: no owner token: pass --token, set SLIPWAY_TOKEN, or put "token" in .slipway.json\n' });
    const noApp = await platform.cli(['auth', 'env', '--write', '.env'], { env: platform.cliEnv({ SLIPWAY_TOKEN: app.ownerToken }) });
    expect(noApp.code).toBe(2);
    expect(noApp.stderr).toMatch(/^slipway: no application: pass --application/);
  });
});
