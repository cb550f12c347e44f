/**
 * Package managers end to end: one fixture per manager (npm, pnpm pinned by packageManager, yarn
 * classic, yarn berry, bun), each with its committed lockfile, built by the real worker in the
 * real build sandbox with that manager fetched from the npm registry (verified, cached per machine)
 * and run by the real edge. Checks the frozen install, the release without dev dependencies or
 * build caches, the build cache kept for the next build, and the dependency cache per manager.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, sourceTar, type DeployHarness } from '@slipway/testing';
import { getThroughEdge, startRegistryPlatform } from './registry-platform.js';

interface Served {
  build: { agent: string | null; node: string; builds: number; devDependencyAtBuild: boolean };
  escaped: string;
  node: string;
  devDependencyShipped: boolean;
  buildCacheShipped: boolean;
}

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('package managers, deployed (real worker, edge, sandboxes, npm registry)', () => {
  let h: DeployHarness;
  let port: number;

  beforeAll(async () => {
    ({ h, port } = await startRegistryPlatform('package-managers'));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const log = (row: { steps: { name: string; log: string }[] }, step: string) => row.steps.find((s) => s.name === step)!.log;

  it.each([
    // Nothing declared: Node 24; pm-yarn-classic pins 20 in .nvmrc (the platform's own Node here).
    ['pm-npm', 'npm', 'package-lock.json', 'npm ci', /^npm\//, /^24\./],
    ['pm-pnpm', 'pnpm', 'pnpm-lock.yaml', 'pnpm install --frozen-lockfile', /^pnpm\/9\.15\.9 /, /^24\./],
    ['pm-yarn-classic', 'yarn', 'yarn.lock', 'yarn install --frozen-lockfile', /^yarn\/1\.22\./, /^20\./],
    ['pm-yarn-berry', 'yarn', 'yarn.lock', 'yarn install --immutable', /^yarn\/4\.18\.1 /, /^24\./],
    ['pm-bun', 'bun', 'bun.lock', 'bun install --frozen-lockfile', /^bun\/1\./, /^24\./],
  ] as const)(
    '%s: frozen install with its own manager, lean release, caches kept for the next deploy',
    async (fixture, manager, lockfile, install, agent, nodeMajor) => {
      const slug = fixture.replace(/^pm-/, 'pm').replace(/-/g, '');
      const appId = await h.createApplication({ slug });
      const source = await sourceTar(join(FIXTURES, fixture));
      const first = await h.waitForFinal(await h.deploy(appId, source), 400_000);
      if (first.error)
        console.log(
          first.steps
            .map((s) => `${s.name}: ${s.log}`)
            .join('\n')
            .slice(-4000),
        );
      expect(first.error).toBeNull();
      const spec = first.spec as {
        packageManager: string;
        packageManagerVersion: string;
        lockfile: string;
        commands: { install: string };
        nodeVersion: string;
        artifact: { bytes: number; files: number };
      };
      expect(spec).toMatchObject({ packageManager: manager, lockfile, commands: expect.objectContaining({ install }) });
      expect(spec.packageManagerVersion).toMatch(/^\d+\.\d+\.\d+$/);
      expect(log(first, 'install')).toContain(`$ ${install}`);
      // No setting of another manager's in this one's environment (npm warned about pnpm's store-dir).
      for (const step of ['install', 'build']) expect(log(first, step)).not.toMatch(/Unknown (env|user) config/);
      expect(spec.artifact.bytes).toBeGreaterThan(0);
      expect(spec.artifact.files).toBeGreaterThan(3);

      const served = JSON.parse((await getThroughEdge(port, `${slug}.localhost:${port}`)).body) as Served;
      expect(served.escaped).toBe('&lt;pm&gt;');
      expect(served.build.agent).toMatch(agent);
      expect(served.build.devDependencyAtBuild).toBe(true);
      // The release: no dev dependency (pruned after the build), no build cache; on the project's Node.
      expect(served).toMatchObject({ devDependencyShipped: false, buildCacheShipped: false, node: `v${spec.nodeVersion}` });
      expect(spec.nodeVersion).toMatch(nodeMajor);

      // Redeploy: dependencies from the per-application cache (this manager's entry), build cache restored.
      const second = await h.waitForFinal(await h.deploy(appId, source), 400_000);
      expect(second.error).toBeNull();
      expect(log(second, 'install')).toMatch(/dependencies restored from the cache/);
      expect(log(second, 'build')).toMatch(/build caches restored: node_modules\/\.cache/);
      const again = JSON.parse((await getThroughEdge(port, `${slug}.localhost:${port}`)).body) as Served;
      expect(again.build.builds).toBe(2);
      expect(again.devDependencyShipped).toBe(false);
    },
    900_000,
  );

  it('a package manager version the registry does not have fails at analyze with package_manager_unavailable, nothing ran', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'pm-missing-'));
    try {
      const pkg = {
        name: 'pm-missing',
        private: true,
        packageManager: 'pnpm@9.99.99',
        scripts: { build: 'touch /workspace/ran', start: 'node server.js' },
        dependencies: { 'escape-html': '1.0.3' },
      };
      const appId = await h.createApplication({ slug: 'pmmissing' });
      const row = await h.waitForFinal(
        await h.deploy(
          appId,
          await sourceTar(empty, {
            'package.json': JSON.stringify(pkg),
            'server.js': 'require("node:http").createServer((q, s) => s.end("x")).listen(process.env.PORT)',
          }),
        ),
        120_000,
      );
      expect(row.status).toBe('failed');
      expect(row.error).toMatchObject({ code: 'package_manager_unavailable', step: 'analyze' });
      expect(row.error!.message).toMatch(/pnpm 9\.99\.99 .*not published/);
      expect(row.steps.filter((s) => s.status === 'skipped').map((s) => s.name)).toEqual(['install', 'build', 'scan', 'package', 'release']);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }, 120_000);
});
