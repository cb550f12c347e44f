import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AnalyzeError,
  analyzeSource,
  buildOutputWarnings,
  outputHazards,
  readProjectDir,
  unboundedBuildDiskHazard,
  unsandboxedBuildHazard,
  type AnalyzeContext,
  type HazardCode,
  type WarningCode,
} from './index.js';
import { detectSpec } from './detect-spec.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const context: AnalyzeContext = { secretNames: [], signInEnabled: false, runtimeNodeVersion: 'v20.20.2' };
const temps: string[] = [];

/** A temporary copy of a fixture, for files git cannot hold (node_modules, nested .git, big files). */
async function copyOf(name: string, extra: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `analyzer-${name}-`));
  temps.push(dir);
  await cp(join(FIXTURES, name), dir, { recursive: true });
  await extra(dir);
  return dir;
}

async function analyze(dirOrName: string, ctx: AnalyzeContext = context) {
  const dir = dirOrName.startsWith('/') ? dirOrName : join(FIXTURES, dirOrName);
  return analyzeSource(await readProjectDir(dir), ctx);
}

async function served(dirOrName: string) {
  return readProjectDir(dirOrName.startsWith('/') ? dirOrName : join(FIXTURES, dirOrName));
}

const warningCodes = async (dir: string, ctx?: AnalyzeContext): Promise<WarningCode[]> => (await analyze(dir, ctx)).warnings.map((w) => w.code);
const sourceHazardCodes = async (dir: string): Promise<HazardCode[]> => (await analyze(dir)).hazards.map((h) => h.code);

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('spec detection', () => {
  it('detects a plain static site', async () => {
    const { spec } = await analyze('static-site');
    expect(spec).toMatchObject({
      kind: 'static',
      outputDir: '.',
      packageManager: null,
      commands: { install: null, build: null, start: null },
      files: { count: 3 },
      spaFallback: false,
      port: null,
      usesSignIn: false,
    });
    expect(spec.files.bytes).toBeGreaterThan(100);
  });

  it('detects a Vite-style SPA with its package manager, build and output', async () => {
    const { spec } = await analyze('vite-spa');
    expect(spec).toMatchObject({
      kind: 'spa',
      packageManager: 'npm',
      packageManagerSource: 'lockfile',
      lockfile: 'package-lock.json',
      nodeVersion: null,
      nodeVersionRequest: { value: '>=18', source: 'engines' },
      commands: { install: 'npm ci', build: 'npm run build', start: null },
      outputDir: 'dist',
      spaFallback: true,
      env: ['VITE_GREETING'],
    });
  });

  it('detects a Node server that reads PORT', async () => {
    const { spec, warnings } = await analyze('node-server');
    expect(spec).toMatchObject({
      kind: 'node',
      commands: { install: 'npm ci', build: null, start: 'npm run start' },
      outputDir: null,
      port: { source: 'env', fixed: null },
      env: ['PORT'],
    });
    expect(warnings).toEqual([]);
  });

  it('prefers packageManager over the lockfile', async () => {
    const dir = await copyOf('vite-spa', async (d) => {
      await writeFile(
        join(d, 'package.json'),
        JSON.stringify({ scripts: { build: 'vite build' }, devDependencies: { vite: '7.0.0' }, packageManager: 'pnpm@10.0.0' }),
      );
    });
    const { spec } = await analyze(dir);
    expect(spec).toMatchObject({
      kind: 'spa',
      framework: 'vite',
      packageManager: 'pnpm',
      packageManagerSource: 'packageManager',
      commands: { install: 'pnpm install', build: 'pnpm run build' },
    });
  });

  it('refuses an unsupported project with a clear code', async () => {
    await expect(analyze('unsupported')).rejects.toThrow(AnalyzeError);
    await expect(analyze('unsupported')).rejects.toMatchObject({
      code: 'unsupported_project',
      message: expect.stringContaining('only static sites and Node.js projects'),
    });
  });

  it('refuses a server with no way to start it', async () => {
    await expect(analyze('missing-start')).rejects.toMatchObject({ code: 'no_start_script' });
  });

  it('reports the sign-in variables the code uses', async () => {
    expect((await analyze('warn-sign-in-not-enabled')).spec).toMatchObject({ usesSignIn: true, env: ['PORT', 'SERVICE_AUTH_BASE_URL'] });
  });

  it('sees sign-in used through the server library, also when it is vendored', () => {
    const file = (path: string, text: string) => ({ path, text, bytes: text.length });
    const pkg = (deps: Record<string, string>) => file('package.json', JSON.stringify({ scripts: { start: 'node server.js' }, dependencies: deps }));
    const server = file('server.js', "require('http').createServer(() => {}).listen(process.env.PORT);");
    expect(detectSpec([pkg({ '@slipway/sign-in-sdk': '0.1.0' }), server]).usesSignIn).toBe(true);
    expect(detectSpec([pkg({ '@slipway/auth-server': '0.1.0' }), server]).usesSignIn).toBe(true); // renamed from (beta): still counts
    expect(detectSpec([pkg({}), server, file('lib/auth.js', "const base = env['SERVICE_AUTH_BASE_URL'];")]).usesSignIn).toBe(true);
    expect(detectSpec([pkg({}), server, file('app.mjs', "import { createAuthServer } from '@slipway/sign-in-sdk';")]).usesSignIn).toBe(true);
    expect(detectSpec([pkg({}), server, file('app.mjs', "import { createAuthServer } from '@slipway/auth-server';")]).usesSignIn).toBe(true); // renamed from (beta)
    expect(detectSpec([pkg({ express: '5.0.0' }), server]).usesSignIn).toBe(false);
  });
});

describe('warnings: each fires on its fixture and not on the clean ones', () => {
  const clean = ['static-site', 'vite-spa', 'node-server'];
  const cases: [WarningCode, () => Promise<string>, AnalyzeContext?][] = [
    ['no_lockfile', async () => 'warn-no-lockfile'],
    [
      'node_modules_uploaded',
      () =>
        copyOf('warn-node-modules', async (d) => {
          await mkdir(join(d, 'node_modules/left-pad'), { recursive: true });
          await writeFile(join(d, 'node_modules/left-pad/index.js'), 'module.exports = 1;');
        }),
    ],
    ['missing_secret', async () => 'warn-missing-secret'],
    ['engine_mismatch', async () => 'warn-engine-mismatch'],
    ['no_start_script', async () => 'warn-no-start-script'],
    ['port_not_from_env', async () => 'warn-port-not-from-env'],
    [
      'large_files',
      () =>
        copyOf('warn-large-files', async (d) => {
          await writeFile(join(d, 'video.mp4'), '');
          await truncate(join(d, 'video.mp4'), 6 * 1024 * 1024);
        }),
    ],
    ['sign_in_not_enabled', async () => 'warn-sign-in-not-enabled'],
  ];
  it.each(cases)('%s', async (code, fixture) => {
    const dir = await fixture();
    const warnings = (await analyze(dir)).warnings.filter((w) => w.code === code);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message.length).toBeGreaterThan(20);
    for (const name of clean) expect(await warningCodes(name, { ...context, secretNames: ['VITE_GREETING'] })).not.toContain(code);
  });

  it('missing_secret names the variable and stays quiet once the secret exists', async () => {
    expect((await analyze('warn-missing-secret')).warnings).toEqual([expect.objectContaining({ code: 'missing_secret', detail: 'STRIPE_API_KEY' })]);
    expect(await warningCodes('warn-missing-secret', { ...context, secretNames: ['STRIPE_API_KEY'] })).toEqual([]);
  });

  it('sign_in_not_enabled is quiet when sign-in is on', async () => {
    expect(await warningCodes('warn-sign-in-not-enabled', { ...context, signInEnabled: true })).toEqual([]);
  });

  it('build_output_warnings summarises what the build printed', () => {
    const noisy = execFileSync('sh', ['-c', 'node build.mjs 2>&1'], { cwd: join(FIXTURES, 'warn-build-output'), encoding: 'utf8' });
    expect(buildOutputWarnings(noisy)).toEqual([
      expect.objectContaining({ code: 'build_output_warnings', detail: expect.stringContaining('larger than 500 kB') }),
    ]);
    expect(buildOutputWarnings('> vite-style-spa@1.0.0 build\n> node build.mjs\nbuilt dist/assets/main-1a2b3c4d.js\n')).toEqual([]);
  });
});

describe('hazards: each fires on its fixture and not on the clean ones', () => {
  const clean = ['static-site', 'vite-spa', 'node-server'];

  it('secret_in_source', async () => {
    expect((await analyze('hazard-secret-in-source')).hazards).toEqual([
      expect.objectContaining({ code: 'secret_in_source', severity: 'high', path: 'config.js', detail: expect.stringContaining('Stripe') }),
    ]);
    for (const name of clean) expect(await sourceHazardCodes(name)).toEqual([]);
  });

  const secrets = [{ name: 'ORDER_SERVICE_TOKEN', value: 'canary-order-service-token-42' }];

  it('secret_in_output finds a secret value, base64-encoded here, in served files', async () => {
    expect(outputHazards(await served('hazard-secret-in-output'), { secrets })).toEqual([
      expect.objectContaining({ code: 'secret_in_output', severity: 'critical', path: 'app.js', detail: 'ORDER_SERVICE_TOKEN' }),
    ]);
    for (const name of clean) expect(outputHazards(await served(name), { secrets })).toEqual([]);
  });

  it('secret_in_output finds plain and URL-encoded values too', () => {
    const value = 'p@ss word/with&symbols';
    expect(outputHazards([{ path: 'a.js', bytes: 1, text: `x=${encodeURIComponent(value)}` }], { secrets: [{ name: 'DB_PASSWORD', value }] })).toHaveLength(1);
    expect(outputHazards([{ path: 'a.js', bytes: 1, text: `x="${value}"` }], { secrets: [{ name: 'DB_PASSWORD', value }] })).toHaveLength(1);
  });

  it('secret_in_output leaves public variables alone: they are meant for the browser', () => {
    expect(outputHazards([{ path: 'a.js', bytes: 1, text: 'x="hello visitors"' }], { secrets: [{ name: 'VITE_GREETING', value: 'hello visitors' }] })).toEqual(
      [],
    );
  });

  it('client_exposed_secret: a sensitive value under a public prefix, or the cookie secret in a bundle', async () => {
    const files = await served('hazard-client-exposed-secret');
    expect(outputHazards(files, { secrets: [{ name: 'VITE_STRIPE_SECRET_KEY', value: 'sk_test_abcdefghijklmnop1234' }] })).toEqual([
      expect.objectContaining({ code: 'client_exposed_secret', detail: 'VITE_STRIPE_SECRET_KEY' }),
    ]);
    expect(outputHazards(files, { secrets: [{ name: 'VITE_GREETING', value: 'hello there' }] })).toEqual([]);
    const cookieSecret = 'cookie-secret-canary-0123456789';
    expect(outputHazards([{ path: 'assets/x.js', bytes: 1, text: `const s="${cookieSecret}"` }], { secrets: [], cookieSecret })).toEqual([
      expect.objectContaining({ code: 'client_exposed_secret', severity: 'critical' }),
    ]);
    for (const name of clean) expect(outputHazards(await served(name), { secrets: [], cookieSecret })).toEqual([]);
  });

  it('env_file_served', async () => {
    expect(outputHazards(await served('hazard-env-file'), { secrets: [] })).toEqual([
      expect.objectContaining({ code: 'env_file_served', path: '.env.production' }),
    ]);
    for (const name of clean) expect(outputHazards(await served(name), { secrets: [] })).toEqual([]);
  });

  it('dotgit_served', async () => {
    const dir = await copyOf('hazard-dotgit-served', async (d) => {
      await mkdir(join(d, '.git'), { recursive: true });
      await writeFile(join(d, '.git/HEAD'), 'ref: refs/heads/main\n');
      await writeFile(join(d, '.git/config'), '[core]\n');
    });
    expect(outputHazards(await served(dir), { secrets: [] })).toEqual([expect.objectContaining({ code: 'dotgit_served', path: '.git', detail: '2 files' })]);
  });

  it('source_maps_served', async () => {
    expect(outputHazards(await served('hazard-source-maps'), { secrets: [] })).toEqual([
      expect.objectContaining({ code: 'source_maps_served', severity: 'low', path: 'app.4c1d.js.map' }),
    ]);
    for (const name of clean) expect(outputHazards(await served(name), { secrets: [] }).map((h) => h.code)).not.toContain('source_maps_served');
  });

  it('unsandboxed_build says why', () => {
    expect(unsandboxedBuildHazard('bwrap not found')).toEqual(
      expect.objectContaining({ code: 'unsandboxed_build', severity: 'medium', detail: 'bwrap not found' }),
    );
  });

  it('unbounded_build_disk says why', () => {
    expect(unboundedBuildDiskHazard('BUILD_DISK_MB=0')).toEqual(
      expect.objectContaining({ code: 'unbounded_build_disk', severity: 'medium', detail: 'BUILD_DISK_MB=0' }),
    );
  });
});
