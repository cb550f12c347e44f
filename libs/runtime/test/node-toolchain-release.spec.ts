import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBlobStore } from '@slipway/blob';
import { LocalSandbox, removeAppUser } from '@slipway/sandbox';
import { NodeToolchains, NpmRegistry, type NodeToolchain } from '@slipway/toolchains';
import { LocalDriver, type RunningRelease } from '../src/index.js';

const run = promisify(execFile);
const SUPPORTED = [20, 22, 24];
/**
 * The machine cache libs/toolchains' `test/node-toolchain.spec.ts` fills (real Node.js builds from
 * the real registry): a run after it verifies the cached binaries instead of downloading.
 */
const CACHE = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';
const registry = new NpmRegistry({ downloadTimeoutMs: 180_000 });

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;
rootOnly('the runtime sandbox runs a release on the Node it was built with', () => {
  const apps = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const running: RunningRelease[] = [];
  let home: string;
  let toolchains: NodeToolchains;
  let node22: NodeToolchain;
  let node24: NodeToolchain;

  beforeAll(async () => {
    await mkdir(CACHE, { recursive: true, mode: 0o755 });
    toolchains = new NodeToolchains({ root: CACHE, registry, supported: SUPPORTED });
    const v22 = await toolchains.resolve({ value: '22', source: '.nvmrc' });
    const v24 = await toolchains.resolve({ value: '>=24', source: 'engines' });
    [node22, node24] = (await Promise.all([toolchains.ensure(v22.version), toolchains.ensure(v24.version)])) as [NodeToolchain, NodeToolchain];
  }, 400_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.stop(2000)));
    await Promise.all(apps.map((id) => removeAppUser(id)));
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('node 22 via `node server.js`, node 24 via `npm start`', async () => {
    home = await mkdtemp(join(tmpdir(), 'tc-runtime-'));
    await chmod(home, 0o711);
    const blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
    const src = join(home, 'src');
    await mkdir(src);
    await writeFile(
      join(src, 'server.js'),
      "require('node:http').createServer((q, s) => s.end(JSON.stringify({ version: process.version, execPath: process.execPath, path: process.env.PATH }))).listen(Number(process.env.PORT));",
    );
    await writeFile(join(src, 'package.json'), JSON.stringify({ name: 'v', private: true, scripts: { start: 'node server.js' } }));
    await run('tar', ['-czf', `${src}.tgz`, '-C', src, 'server.js', 'package.json']);
    await blobs.put('releases/v.tar.gz', createReadStream(`${src}.tgz`));
    const sandbox = new LocalSandbox({ limits: { memoryBytes: 256 << 20, pids: 64, cpus: 0.5 }, tmpBytes: 16 << 20, hostPorts: [] });
    const driver = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 30_000, sandbox, toolchains });
    for (const [i, [toolchain, start]] of (
      [
        [node22, 'node server.js'],
        [node24, 'npm start'],
      ] as const
    ).entries()) {
      const release = await driver
        .start({
          releaseId: randomUUID(),
          applicationId: apps[i]!,
          slug: `v${i}`,
          artifactKey: 'releases/v.tar.gz',
          startCommand: start,
          env: { PATH: '/evil' },
          nodeVersion: toolchain.version,
        })
        .catch((error: Error & { logTail?: string }) => Promise.reject(new Error(`${error.message}\n${error.logTail ?? ''}`)));
      running.push(release);
      const body = (await (await fetch(`http://127.0.0.1:${release.port}/`)).json()) as { version: string; execPath: string; path: string };
      expect(body).toMatchObject({ version: `v${toolchain.version}`, execPath: '/opt/slipway/node/bin/node' });
      // The platform's PATH, not the app's (`npm start` puts its own directories in front).
      expect(body.path.endsWith('/opt/slipway/node/bin:/usr/local/bin:/usr/bin:/bin')).toBe(true);
      expect(body.path).not.toContain('/evil');
    }
  }, 120_000);

  it('gives a Node app a young generation sized for its memory limit (256 MiB: 2 MiB semi-spaces); a project that sets one keeps its own', async () => {
    const blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
    const src = join(home, 'heap');
    await mkdir(src);
    // What Node was given (it starts: Node 24 takes the flag in NODE_OPTIONS).
    await writeFile(
      join(src, 'server.js'),
      "require('node:http').createServer((q, s) => s.end(JSON.stringify({ options: process.env.NODE_OPTIONS ?? null }))).listen(Number(process.env.PORT));",
    );
    await run('tar', ['-czf', `${src}.tgz`, '-C', src, 'server.js']);
    await blobs.put('releases/heap.tar.gz', createReadStream(`${src}.tgz`));
    const sandbox = new LocalSandbox({ limits: { memoryBytes: 256 << 20, pids: 64, cpus: 0.5 }, tmpBytes: 16 << 20, hostPorts: [] });
    const driver = new LocalDriver({ blobs, dir: join(home, 'runtime-heap'), healthTimeoutMs: 30_000, sandbox, toolchains });
    const bodies: { options: string | null }[] = [];
    for (const [i, env] of ([{}, { NODE_OPTIONS: '--max-semi-space-size=1 --enable-source-maps' }] as Record<string, string>[]).entries()) {
      const release = await driver.start({
        releaseId: randomUUID(),
        applicationId: apps[2 + i]!,
        slug: `h${i}`,
        artifactKey: 'releases/heap.tar.gz',
        startCommand: 'node server.js',
        env,
        nodeVersion: node24.version,
      });
      running.push(release);
      bodies.push((await (await fetch(`http://127.0.0.1:${release.port}/`)).json()) as { options: string | null });
    }
    expect(bodies[0]!.options).toBe('--max-semi-space-size=2');
    expect(bodies[1]!.options).toBe('--max-semi-space-size=1 --enable-source-maps');
  }, 120_000);
});
