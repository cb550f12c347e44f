/**
 * Node versions end to end: projects declaring a Node (engines.node, .nvmrc, nothing) are built by
 * the real worker in the real build sandbox and run by the real edge in the real runtime sandbox,
 * each on the Node it asked for, fetched from the npm registry (cached per machine, shared with
 * libs/toolchains' tests).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, type DeployHarness } from '@slipway/testing';
import { TOOLCHAINS, getThroughEdge, projectTar, startRegistryPlatform } from './registry-platform.js';

const SERVER =
  "require('node:http').createServer((q, s) => s.end(JSON.stringify({ version: process.version, execPath: process.execPath }))).listen(Number(process.env.PORT));\n";

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('Node versions, deployed (real worker, edge, sandboxes, npm registry)', () => {
  let h: DeployHarness;
  let port: number;

  beforeAll(async () => {
    ({ h, port } = await startRegistryPlatform('node-versions'));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  async function deploy(slug: string, files: Record<string, string>) {
    const appId = await h.createApplication({ slug });
    return h.waitForFinal(await h.deploy(appId, await projectTar(files)), 400_000);
  }

  it.each([
    // engines ">=22": the platform's 20 does not fit, the newest supported major does; npm ci runs with that Node's npm.
    ['engines-24', { 'package.json': { engines: { node: '>=22' }, dependencies: { 'escape-html': '1.0.3' } }, lockfile: true }, /^24\./, 'engines'],
    // A range resolves to the newest supported major it allows (as Vercel does), not to the platform's own 20.
    ['engines-range', { 'package.json': { engines: { node: '>=20' } } }, /^24\./, 'engines'],
    ['nvmrc-22', { 'package.json': {}, '.nvmrc': 'lts/jod\n' }, /^22\./, '.nvmrc'],
    // A pin to an end-of-life major runs on it, with the warning node_end_of_life.
    ['nvmrc-20', { 'package.json': {}, '.nvmrc': '20\n' }, /^20\./, '.nvmrc'],
    // Nothing declared: the default, Node 24 (the Active LTS; 20 is end-of-life), from the toolchain cache.
    ['default-24', { 'package.json': {} }, /^24\./, null],
  ] as const)(
    '%s: built and run on the Node it declared',
    async (slug, project, major, source) => {
      const pkg = {
        name: slug,
        private: true,
        version: '1.0.0',
        scripts: { build: 'node --version && npm --version', start: 'node server.js' },
        ...project['package.json'],
      };
      const files: Record<string, string> = { 'package.json': JSON.stringify(pkg), 'server.js': SERVER };
      if ('.nvmrc' in project) files['.nvmrc'] = project['.nvmrc'];
      if ('lockfile' in project)
        files['package-lock.json'] = (await readFile(join(FIXTURES, 'node-server', 'package-lock.json'), 'utf8')).replace(
          '"name": "node-server-fixture"',
          `"name": "${slug}"`,
        );
      const row = await deploy(slug, files);
      if (row.error)
        console.log(
          row.steps
            .map((s) => `${s.name}: ${s.log}`)
            .join('\n')
            .slice(-3000),
        );
      expect(row.error).toBeNull();
      expect(row.status).toBe('succeeded');
      const version = (row.spec as { nodeVersion: string }).nodeVersion;
      expect(version).toMatch(major);
      expect(row.spec).toMatchObject({ nodeVersionRequest: source ? expect.objectContaining({ source }) : null });
      expect(row.warnings.filter((w) => w.code === 'node_end_of_life').length).toBe(version.startsWith('20.') ? 1 : 0);
      // The build ran on it...
      expect(row.steps.find((s) => s.name === 'build')!.log).toContain(`v${version}`);
      // ...and so does the release the edge serves.
      const reply = await getThroughEdge(port, `${slug}.localhost:${port}`);
      expect(reply.status).toBe(200);
      const body = JSON.parse(reply.body) as { version: string; execPath: string };
      expect(body.version).toBe(`v${version}`);
      // The platform's own Node (a pin to its major) is the machine's; any other comes from the toolchain cache.
      if (version === process.versions.node) expect(body.execPath).toBe(process.execPath);
      else expect(body.execPath).toBe('/opt/slipway/node/bin/node');
      if (!source)
        expect((row.spec as { reasons: string[] }).reasons).toContainEqual(
          expect.stringMatching(/^Node\.js 24\.\d+\.\d+: nothing declared .*Node 24 \(the Active LTS; Node 20 is end-of-life\)/),
        );
    },
    420_000,
  );

  it('a Node the platform does not offer fails at analyze with node_version_unsupported, before anything ran', async () => {
    const row = await deploy('node-18', {
      'package.json': JSON.stringify({
        name: 'n18',
        private: true,
        scripts: { build: 'touch /workspace/ran', start: 'node server.js' },
        engines: { node: '18.x' },
      }),
      'server.js': SERVER,
    });
    expect(row.status).toBe('failed');
    expect(row.error).toMatchObject({ code: 'node_version_unsupported', step: 'analyze' });
    expect(row.error!.message).toMatch(/engines\.node "18\.x" asks for Node\.js 18; this platform offers majors 20, 22, 24 only/);
    expect(row.steps.filter((s) => s.status === 'skipped').map((s) => s.name)).toEqual(['install', 'build', 'scan', 'package', 'release']);
  }, 120_000);

  it('unsandboxed (BUILD_SANDBOX=off, RUNTIME_SANDBOX=off): still built and run on the declared Node, from the machine cache', async () => {
    const { h: off, port: edgePort } = await startRegistryPlatform('node-versions-off', { edge: { RUNTIME_SANDBOX: 'off' }, worker: { BUILD_SANDBOX: 'off' } });
    try {
      const appId = await off.createApplication({ slug: 'off22' });
      const pkg = { name: 'off22', private: true, scripts: { build: 'node --version', start: 'node server.js' } };
      const row = await off.waitForFinal(
        await off.deploy(appId, await projectTar({ 'package.json': JSON.stringify(pkg), 'server.js': SERVER, '.node-version': '22' })),
        120_000,
      );
      expect(row.error).toBeNull();
      const version = (row.spec as { nodeVersion: string }).nodeVersion;
      expect(version).toMatch(/^22\./);
      expect(row.steps.find((s) => s.name === 'build')!.log).toContain(`v${version}`);
      const body = JSON.parse((await getThroughEdge(edgePort, `off22.localhost:${edgePort}`)).body) as { version: string; execPath: string };
      expect(body).toEqual({ version: `v${version}`, execPath: join(TOOLCHAINS, 'node', version, 'bin', 'node') });
    } finally {
      await off.close();
    }
  }, 180_000);
});
