/**
 * Monorepos and servers found in the build's output, end to end: an npm workspace with two
 * applications and a library is refused as ambiguous, then deployed twice by `rootDirectory`
 * (slipway.json) — installed at the top level, the library built first, each application built
 * and started in its folder — and a front end whose build writes Nitro's `.output/server` is run
 * as the server it built. Real worker, build and runtime sandboxes, edge; no registry needed
 * (the projects have no outside dependencies).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, type DeployHarness } from '@slipway/testing';
import { getThroughEdge, projectTar, startRegistryPlatform } from './registry-platform.js';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** npm workspaces: apps/api (a server using the library), apps/site (a built front end), packages/greet (a library with a build). */
const WORKSPACE: Record<string, string> = {
  'package.json': json({ name: 'mono', private: true, workspaces: ['apps/*', 'packages/*'] }),
  'packages/greet/package.json': json({ name: 'greet', version: '1.0.0', main: 'dist/index.js', scripts: { build: 'node build.js' } }),
  'packages/greet/build.js':
    "require('node:fs').mkdirSync('dist', { recursive: true }); require('node:fs').writeFileSync('dist/index.js', 'module.exports = (who) => `hello ${who} from a built library`;\\n');\n",
  'apps/api/package.json': json({ name: 'api', version: '1.0.0', scripts: { start: 'node server.js' }, dependencies: { greet: '1.0.0' } }),
  'apps/api/server.js':
    "const greet = require('greet');\nrequire('node:http').createServer((q, s) => { s.setHeader('content-type', 'application/json'); s.end(JSON.stringify({ message: greet('api'), cwd: process.cwd() })); }).listen(Number(process.env.PORT));\n",
  'apps/site/package.json': json({ name: 'site', version: '1.0.0', scripts: { build: 'node build.js' } }),
  'apps/site/index.html': '<!doctype html><div id="app"></div><script type="module" src="/main.js"></script>\n',
  'apps/site/build.js':
    "const fs = require('node:fs'); fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/index.html', '<!doctype html><h1>the site of the monorepo</h1>');\n",
};

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('monorepos and servers in the build output (real worker, edge, sandboxes)', () => {
  let h: DeployHarness;
  let port: number;

  beforeAll(async () => {
    ({ h, port } = await startRegistryPlatform('monorepo'));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  async function deploy(slug: string, files: Record<string, string>) {
    const appId = await h.createApplication({ slug });
    return h.waitForFinal(await h.deploy(appId, await projectTar(files)), 400_000);
  }

  it('two applications and no choice: ambiguous_project at analyze, nothing ran', async () => {
    const row = await deploy('mono-ambiguous', WORKSPACE);
    expect(row.status).toBe('failed');
    expect(row.error).toMatchObject({ code: 'ambiguous_project', step: 'analyze' });
    expect(row.error!.message).toContain('apps/api, apps/site');
    expect(row.error!.message).toContain('"rootDirectory": "apps/api"');
    expect(row.steps.filter((s) => s.status === 'skipped').map((s) => s.name)).toEqual(['install', 'build', 'scan', 'package', 'release']);
  }, 120_000);

  it('rootDirectory apps/api: installed at the top level, the library built first, the server started in its folder', async () => {
    const row = await deploy('mono-api', { ...WORKSPACE, 'slipway.json': json({ rootDirectory: 'apps/api' }) });
    if (row.error)
      console.log(
        row.steps
          .map((s) => `${s.name}: ${s.log}`)
          .join('\n')
          .slice(-4000),
      );
    expect(row.error).toBeNull();
    expect(row.spec).toMatchObject({
      kind: 'node',
      rootDirectory: 'apps/api',
      commands: { install: 'npm install', build: '(cd packages/greet && npm run build)', start: 'cd apps/api && npm run start' },
      workspace: { declaredIn: 'package.json "workspaces"', candidates: ['apps/api', 'apps/site'], builtFirst: ['packages/greet'] },
    });
    const reply = await getThroughEdge(port, `mono-api.localhost:${port}`);
    expect(reply.status).toBe(200);
    const body = JSON.parse(reply.body) as { message: string; cwd: string };
    expect(body.message).toBe('hello api from a built library');
    expect(body.cwd).toMatch(/\/apps\/api$/);
  }, 420_000);

  it('rootDirectory apps/site: the front end built in its folder and served from apps/site/dist', async () => {
    const row = await deploy('mono-site', { ...WORKSPACE, 'slipway.json': json({ rootDirectory: 'apps/site' }) });
    if (row.error)
      console.log(
        row.steps
          .map((s) => `${s.name}: ${s.log}`)
          .join('\n')
          .slice(-4000),
      );
    expect(row.error).toBeNull();
    expect(row.spec).toMatchObject({
      kind: 'spa',
      rootDirectory: 'apps/site',
      outputDir: 'apps/site/dist',
      commands: { build: 'cd apps/site && npm run build' },
    });
    const reply = await getThroughEdge(port, `mono-site.localhost:${port}`, '/some/deep/link');
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('the site of the monorepo');
  }, 420_000);

  it('a project in a sub-folder (no workspace): installed there from its own lockfile, twice (no dependency cache at the top level)', async () => {
    const files = {
      'README.md': '# the service lives in service/\n',
      'slipway.json': json({ rootDirectory: 'service' }),
      'service/package.json': json({
        name: 'node-server-fixture',
        private: true,
        version: '1.0.0',
        scripts: { start: 'node server.js' },
        dependencies: { 'escape-html': '1.0.3' },
      }),
      'service/package-lock.json': await readFile(join(FIXTURES, 'node-server', 'package-lock.json'), 'utf8'),
      'service/server.js':
        "const escape = require('escape-html');\nrequire('node:http').createServer((q, s) => s.end(escape('<sub-folder>'))).listen(Number(process.env.PORT));\n",
    };
    const appId = await h.createApplication({ slug: 'sub-folder' });
    for (const attempt of ['first', 'second']) {
      const row = await h.waitForFinal(await h.deploy(appId, await projectTar(files)), 400_000);
      if (row.error)
        console.log(
          attempt,
          row.steps
            .map((s) => `${s.name}: ${s.log}`)
            .join('\n')
            .slice(-4000),
        );
      expect(row.error).toBeNull();
      expect(row.spec).toMatchObject({
        rootDirectory: 'service',
        lockfile: 'service/package-lock.json',
        commands: { install: 'cd service && npm ci', start: 'cd service && npm run start' },
      });
      expect(row.steps.find((s) => s.name === 'install')!.log).toContain('dependencies are not cached for a project in a sub-folder (service)');
      expect((await getThroughEdge(port, `sub-folder.localhost:${port}`)).body).toBe('&lt;sub-folder&gt;');
    }
  }, 420_000);

  it("a front end whose build writes Nitro's .output/server is run as that server", async () => {
    const row = await deploy('nitro-out', {
      'package.json': json({ name: 'nitro-out', private: true, scripts: { build: 'node build.js' } }),
      'index.html': '<!doctype html><script type="module" src="/main.js"></script>\n',
      'build.js': [
        "const fs = require('node:fs');",
        "fs.mkdirSync('.output/server', { recursive: true }); fs.mkdirSync('.output/public', { recursive: true });",
        "fs.writeFileSync('.output/public/robots.txt', 'User-agent: *');",
        "fs.writeFileSync('.output/server/index.mjs', \"import { createServer } from 'node:http'; createServer((q, s) => s.end('rendered by the server the build wrote ' + q.url)).listen(Number(process.env.PORT));\\n\");",
      ].join('\n'),
    });
    if (row.error)
      console.log(
        row.steps
          .map((s) => `${s.name}: ${s.log}`)
          .join('\n')
          .slice(-4000),
      );
    expect(row.error).toBeNull();
    expect(row.spec).toMatchObject({
      kind: 'node',
      commands: { start: 'node .output/server/index.mjs' },
      outputDir: '.output/public',
      startSource: 'framework',
    });
    expect((row.spec as { reasons: string[] }).reasons).toContainEqual(expect.stringContaining("the build wrote Nitro's node server"));
    const reply = await getThroughEdge(port, `nitro-out.localhost:${port}`, '/page?x=1');
    expect(reply.body).toBe('rendered by the server the build wrote /page?x=1');
  }, 420_000);
});
