import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SERVER_URL } from '@slipway/testing';
import pg from 'pg';
import { startPlatform, type Bootstrapped, type PlatformUnderTest } from './support/platform.js';

describe('slipway auth enable / auth env (real binary, real gateway)', () => {
  let platform: PlatformUnderTest;
  let app: Bootstrapped;
  let project: string;
  beforeAll(async () => {
    platform = await startPlatform('cli-auth');
    app = await platform.bootstrap('Auth');
    project = await mkdtemp(join(tmpdir(), 'slipway-cli-auth-'));
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    await rm(project, { recursive: true, force: true });
    if (!app) return;
    // The application database switching sign-in on created on the shared test server.
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    const name = `app_${app.applicationId.replace(/-/g, '')}`;
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS "${name}"`);
    await admin.end();
  });

  it('auth env before enable is a refused request (404, exit 1); enable twice is one service; env --write merges into .env', async () => {
    const env = platform.cliEnv({ SLIPWAY_TOKEN: app.ownerToken, SLIPWAY_APPLICATION_ID: app.applicationId });
    const early = await platform.cli(['auth', 'env'], { env });
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/^slipway: not_found: Sign-in is not on/);

    const first = await platform.cli(['auth', 'enable', '--json'], { env });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const record = JSON.parse(first.stdout);
    expect(record).toMatchObject({
      applicationId: app.applicationId,
      baseUrl: `http://localhost:3001/a/${app.slug}`,
      jwksUrl: `http://localhost:3001/a/${app.slug}/jwks`,
    });
    const second = await platform.cli(['auth', 'enable', '--json'], { env });
    expect(JSON.parse(second.stdout)).toEqual(record);
    expect((await platform.sql.query('SELECT count(*)::int AS n FROM sign_in_services WHERE application_id = $1', [app.applicationId])).rows[0].n).toBe(1);

    const printed = await platform.cli(['auth', 'env'], { env });
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(
      /^SERVICE_AUTH_BASE_URL=http:\/\/localhost:3001\/a\/[a-z0-9-]+\nSERVICE_AUTH_COOKIE_SECRET=[\w-]{43,}\nSERVICE_AUTH_JWKS_URL=\S+\/jwks\nVITE_SERVICE_AUTH_URL=\S+\n$/,
    );

    await writeFile(join(project, '.env'), 'PORT=8080\nSERVICE_AUTH_BASE_URL=http://old\n');
    const written = await platform.cli(['auth', 'env', '--write', '.env', '--json'], { env, cwd: project });
    expect(written.code).toBe(0);
    expect(JSON.parse(written.stdout)).toMatchObject({
      added: ['SERVICE_AUTH_COOKIE_SECRET', 'SERVICE_AUTH_JWKS_URL', 'VITE_SERVICE_AUTH_URL'],
      replaced: ['SERVICE_AUTH_BASE_URL'],
    });
    const file = await readFile(join(project, '.env'), 'utf8');
    expect(file.startsWith('PORT=8080\n')).toBe(true);
    for (const line of printed.stdout.trim().split('\n')) expect(file).toContain(line);
    // A new file holding the cookie secret is readable by its owner only.
    expect((await platform.cli(['auth', 'env', '--write', 'fresh.env'], { env, cwd: project })).code).toBe(0);
    expect((await stat(join(project, 'fresh.env'))).mode & 0o777).toBe(0o600);
  });

  it('a bad owner token is an authentication error (exit 2)', async () => {
    const bad = await platform.cli(['auth', 'enable'], { env: platform.cliEnv({ SLIPWAY_TOKEN: 'slw_pat_nope', SLIPWAY_APPLICATION_ID: app.applicationId }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^slipway: unauthorized: /);
  });
});
