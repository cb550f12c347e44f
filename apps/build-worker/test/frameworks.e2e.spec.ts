import { execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DeployHarness, freePort, waitFor } from '@slipway/testing';

const run = promisify(execFile);

/**
 * A real framework starter through the real worker: install from the registry, the framework's
 * build in the sandbox, the output check on the framework's own directory, and the packed release
 * started with the spec's start command. The edge's hand-off endpoint is stood in for (the edge
 * has its own tests); the release is started here from the stored artifact instead.
 */
describe('framework starters through the build worker (real registry, real build)', () => {
  let h: DeployHarness;
  let edge: Server;
  const temps: string[] = [];

  beforeAll(async () => {
    h = await DeployHarness.create('worker-frameworks');
    const edgePort = await freePort();
    edge = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"healthy"}'));
    await new Promise<void>((resolve) => edge.listen(edgePort, '127.0.0.1', resolve));
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, BUILD_TIMEOUT_MS: '400000' });
  }, 60_000);

  afterAll(async () => {
    await h.close();
    edge.close();
    await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('SvelteKit with adapter-node: builds build/, packs it, and `node build` serves the page on PORT', async () => {
    const appId = await h.createApplication();
    const id = await h.deployFixture(appId, 'sveltekit-node');
    const row = await h.waitForFinal(id, 420_000, 1000);
    expect([row.status, row.error]).toEqual(['succeeded', null]);
    expect(row.spec).toMatchObject({ kind: 'node', framework: 'sveltekit', commands: { start: 'node build' }, outputDir: 'build/client', buildOutput: 'build' });
    expect(row.warnings.map((w) => w.code)).toEqual(['no_lockfile']);
    expect(row.steps.find((s) => s.name === 'analyze')!.log).toContain('because svelte.config.js: @sveltejs/adapter-node');

    const release = (await h.pg.query(`SELECT kind, artifact_key FROM releases WHERE deployment_id = $1`, [id])).rows[0];
    expect(release.kind).toBe('node');
    const dir = await mkdtemp(join(tmpdir(), 'worker-frameworks-release-'));
    temps.push(dir);
    const artifact = Buffer.concat((await (await h.blobs.get(release.artifact_key)).toArray()) as Buffer[]);
    await writeFile(join(dir, 'release.tar.gz'), artifact);
    await run('tar', ['-xzf', 'release.tar.gz'], { cwd: dir });

    const port = await freePort();
    const server = spawn('sh', ['-c', (row.spec as { commands: { start: string } }).commands.start], { cwd: dir, env: { PATH: process.env['PATH'], PORT: String(port), NODE_ENV: 'production' }, stdio: 'ignore' });
    try {
      const page = await waitFor(async () => {
        const response = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
        return response?.ok ? response.text() : undefined;
      }, { timeoutMs: 30_000, intervalMs: 250, what: 'the SvelteKit server to answer on PORT' });
      expect(page).toContain('Welcome to SvelteKit');
    } finally {
      server.kill('SIGTERM');
    }
  }, 480_000);
});
