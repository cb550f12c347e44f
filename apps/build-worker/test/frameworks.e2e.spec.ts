import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployHarness, sourceTar } from '@slipway/testing';

/**
 * What only the worker can show about frameworks. The starters themselves (install from the
 * registry, the framework's build in the sandbox, the release served through the edge) are
 * deployed by `pnpm test:frameworks` (tools/frameworks), through the CLI and the platform as
 * `pnpm start` runs it.
 */
describe('framework outputs in the build worker', () => {
  let h: DeployHarness;
  const temps: string[] = [];

  beforeAll(async () => {
    h = await DeployHarness.create('worker-frameworks');
    await h.startWorker({ BUILD_TIMEOUT_MS: '120000' });
  }, 60_000);

  afterAll(async () => {
    await h.close();
    await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("a build that does not produce the framework's own output fails with output_missing naming it, before anything is packed", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'worker-frameworks-nest-no-dist-'));
    temps.push(dir);
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ scripts: { build: 'nest build', 'start:prod': 'node dist/main' }, dependencies: { '@nestjs/core': '^11.0.1' } }),
    );
    await writeFile(join(dir, 'slipway.json'), JSON.stringify({ installCommand: 'true', buildCommand: 'node -e "console.log(1)"' }));
    const row = await h.waitForFinal(await h.deploy(await h.createApplication(), await sourceTar(dir)), 120_000, 500);
    expect(row.spec).toMatchObject({ framework: 'nestjs', outputDir: null, buildOutput: 'dist', overrides: ['installCommand', 'buildCommand'] });
    expect(row).toMatchObject({ status: 'failed', error: { code: 'output_missing', step: 'build', message: 'the build finished but did not produce dist/' } });
  }, 180_000);

  it("a failed build's error carries the lines that say why, redacted like the log", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'worker-frameworks-fetch-fails-'));
    temps.push(dir);
    // What a framework prints when a build-time fetch fails (Next.js's next/font/google, say), then exits 1.
    const script =
      "console.log('Creating an optimized production build ...'); console.error('Failed to fetch font `Geist`.\\nURL: https://fonts.googleapis.com/css2?family=Geist\\ngetaddrinfo ENOTFOUND fonts.googleapis.com token=' + process.env.VITE_BUILD_TOKEN); process.exit(1)";
    await writeFile(join(dir, 'build.mjs'), script);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ scripts: { build: 'node build.mjs' } }));
    await writeFile(join(dir, 'index.html'), '<h1>x</h1>');
    // A public-prefixed secret is the kind a build sees; the error is redacted like the log all the same.
    const appId = await h.createApplication({ secrets: { VITE_BUILD_TOKEN: 'tok-7f3a9c1e5b2d4f60' } });
    const row = await h.waitForFinal(await h.deploy(appId, await sourceTar(dir)), 120_000, 500);
    expect(row).toMatchObject({ status: 'failed', error: { code: 'build_failed', step: 'build' } });
    const message = (row.error as { message: string }).message;
    expect(message).toMatch(/^`npm run build` exited with 1:\n/);
    expect(message).toContain('Failed to fetch font `Geist`.');
    expect(message).toContain('URL: https://fonts.googleapis.com/css2?family=Geist');
    expect(message).toContain('getaddrinfo ENOTFOUND fonts.googleapis.com token=[redacted:VITE_BUILD_TOKEN]');
    expect(message).not.toContain('tok-7f3a9c1e5b2d4f60');
    expect(message).not.toContain('Creating an optimized');
  }, 180_000);

  it("a Node server's public/ is scanned besides its outputDir (Next.js serves both): the hazard does not depend on the kind", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'worker-frameworks-public-'));
    temps.push(dir);
    await mkdir(join(dir, 'static'));
    await mkdir(join(dir, 'public'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ scripts: { start: 'node server.js' } }));
    await writeFile(join(dir, 'server.js'), 'require("http").createServer((q, s) => s.end("ok")).listen(process.env.PORT)');
    await writeFile(join(dir, 'slipway.json'), JSON.stringify({ outputDirectory: 'static' }));
    await writeFile(join(dir, 'static', 'app.js'), 'console.log(1)');
    await writeFile(join(dir, 'public', 'config.js'), 'window.KEY = "pk-9d2e7a41c6b85f30";');
    const appId = await h.createApplication({ secrets: { PAYMENT_KEY: 'pk-9d2e7a41c6b85f30' } });
    const row = await h.waitForFinal(await h.deploy(appId, await sourceTar(dir)), 120_000, 500);
    expect(row.spec).toMatchObject({ kind: 'node', outputDir: 'static' });
    expect(row.hazards).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'secret_in_output', path: 'public/config.js', detail: 'PAYMENT_KEY' })]),
    );
  }, 180_000);
});
