import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBlobStore } from '@slipway/blob';
import {
  LocalDriver,
  LocalSandbox,
  NodeToolchains,
  NpmRegistry,
  ToolchainError,
  removeAppUser,
  type NodeToolchain,
  type RunningRelease,
} from '../src/index.js';

const run = promisify(execFile);
const SUPPORTED = [20, 22, 24];
/**
 * Real Node.js builds from the real registry, cached across runs (a machine cache, as in
 * production: later runs verify the cached binary instead of downloading). Traversable by the
 * sandboxes' users.
 */
const CACHE = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';
const registry = new NpmRegistry({ downloadTimeoutMs: 180_000 });

async function version(toolchain: NodeToolchain, bin: 'node' | 'npm'): Promise<string> {
  return (await run(join(toolchain.dir, 'bin', bin), ['--version'], { env: { PATH: `${join(toolchain.dir, 'bin')}:/usr/bin:/bin` } })).stdout.trim();
}

/** A registry on loopback serving whatever a test wants (metadata and tarballs). */
async function fakeRegistry(routes: Record<string, () => Buffer | string>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (!route) return void res.writeHead(404).end();
    res.end(route());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('Node.js toolchains from the npm registry (real downloads, cached)', () => {
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

  it('fetches, verifies and runs Node 22 and Node 24 with the npm of their release', async () => {
    expect(node22.version).toMatch(/^22\./);
    expect(node24.version).toMatch(/^24\./);
    expect(await version(node22, 'node')).toBe(`v${node22.version}`);
    expect(await version(node24, 'node')).toBe(`v${node24.version}`);
    expect(await version(node22, 'npm')).toMatch(/^10\./);
    expect(await version(node24, 'npm')).toMatch(/^11\./);
    // Read-only to everyone but the owner; nothing half-made left beside it.
    const mode = Number((await run('stat', ['-c', '%a', join(node24.dir, 'bin', 'node')])).stdout.trim());
    expect(mode % 100).toBe(55);
    expect((await readdir(join(CACHE, 'node'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('a second lookup (another process) uses the cache and concurrent ones agree', async () => {
    const other = new NodeToolchains({ root: CACHE, registry: new NpmRegistry({ url: 'http://127.0.0.1:9' }), supported: SUPPORTED });
    // A registry that is down does not matter for a version already verified on this machine.
    const lines: string[] = [];
    const [a, b] = await Promise.all([other.ensure(node22.version, (l) => lines.push(l)), other.ensure(node22.version)]);
    expect(a).toEqual(node22);
    expect(b).toEqual(node22);
    expect(lines).toEqual([]);
  });

  it('two instances (as two processes would) fetching the same version at once both end up with one whole copy', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tc-race-'));
    try {
      await chmod(root, 0o755);
      // Separate instances share nothing in memory: only the rename decides.
      const [a, b] = await Promise.all([0, 1].map(() => new NodeToolchains({ root, registry, supported: SUPPORTED }).ensure(node22.version)));
      expect(a).toEqual(b);
      expect(await version(a!, 'node')).toBe(`v${node22.version}`);
      expect(await readdir(join(root, 'node'))).toEqual([node22.version]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 300_000);

  it('refuses a declaration no supported major satisfies, naming both', async () => {
    const error = await toolchains.resolve({ value: '18', source: 'engines' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolchainError);
    expect(error).toMatchObject({ code: 'node_version_unsupported', message: expect.stringMatching(/engines\.node "18".*20, 22, 24/) });
  });

  it('a registry that cannot be reached is a clear failure, never a silent platform Node', async () => {
    const down = new NodeToolchains({
      root: await mkdtemp(join(tmpdir(), 'tc-down-')),
      registry: new NpmRegistry({ url: 'http://127.0.0.1:9', metadataTimeoutMs: 5000 }),
      supported: SUPPORTED,
    });
    await expect(down.resolve({ value: '>=22', source: 'engines' })).rejects.toMatchObject({
      code: 'node_unavailable',
      message: expect.stringContaining('could not list node-linux-'),
    });
    await expect(down.ensure('22.1.0')).rejects.toMatchObject({ code: 'node_unavailable' });
    // Nothing declared (or the platform's Node fits) needs no registry.
    await expect(down.resolve(null)).resolves.toEqual({ version: process.version.slice(1), source: 'platform' });
  });

  it('a tarball that does not match its published sha512 is refused and nothing is cached', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tc-integrity-'));
    const tarball = Buffer.from('not the real node');
    const wrong = Buffer.alloc(64, 7).toString('base64');
    const arch = `node-linux-${process.arch}`;
    const fake = await fakeRegistry({
      [`/${arch}`]: () =>
        JSON.stringify({ versions: { '22.1.0': { version: '22.1.0', dist: { integrity: `sha512-${wrong}`, tarball: `${base}/${arch}.tgz` } } } }),
      [`/${arch}.tgz`]: () => tarball,
      '/npm': () => JSON.stringify({ versions: { '10.9.0': { version: '10.9.0', dist: { integrity: `sha512-${wrong}`, tarball: `${base}/npm.tgz` } } } }),
    });
    const base = fake.url;
    try {
      const lying = new NodeToolchains({ root, registry: new NpmRegistry({ url: base }), supported: SUPPORTED });
      await expect(lying.ensure('22.1.0')).rejects.toMatchObject({
        code: 'node_unavailable',
        message: expect.stringContaining('does not match its published sha512 integrity'),
      });
      expect(await readdir(join(root, 'node'))).toEqual([]);
      // The real tarball with a wrong expected hash: refused too, and the file is gone.
      const file = join(root, 'x.tgz');
      await expect(
        registry.download(
          'npm',
          { version: '10.9.0', dist: { integrity: `sha512-${wrong}`, tarball: 'https://registry.npmjs.org/npm/-/npm-10.9.0.tgz' } },
          file,
        ),
      ).rejects.toMatchObject({ code: 'node_unavailable' });
      await expect(readdir(root)).resolves.not.toContain('x.tgz');
      // A tarball on another host than the registry that published its hash is not fetched.
      await expect(
        new NpmRegistry({ url: base }).download(
          'npm',
          { version: '1.0.0', dist: { integrity: `sha512-${wrong}`, tarball: 'https://example.invalid/npm.tgz' } },
          file,
        ),
      ).rejects.toThrow(/is not on/);
    } finally {
      fake.server.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a cached entry whose binary changed is discarded and fetched again, never run', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tc-corrupt-'));
    try {
      await chmod(root, 0o755);
      await mkdir(join(root, 'node'));
      await run('cp', ['-a', node22.dir, join(root, 'node', node22.version)]);
      const copy = join(root, 'node', node22.version, 'bin', 'node');
      await appendFile(copy, Buffer.from('tampered'));
      const lines: string[] = [];
      const fresh = await new NodeToolchains({ root, registry, supported: SUPPORTED }).ensure(node22.version, (l) => lines.push(l));
      expect(lines[0]).toMatch(/is discarded: bin\/node is not the binary that was verified at install/);
      expect(await version(fresh!, 'node')).toBe(`v${node22.version}`);
      expect(
        await run('cmp', [copy, join(node22.dir, 'bin', 'node')]).then(
          () => 'same',
          () => 'differs',
        ),
      ).toBe('same');
      // A directory left without its marker (a crash mid-copy by hand, a half-deleted entry) is not used either.
      await rm(join(root, 'node', node22.version, '.slipway-toolchain.json'));
      lines.length = 0;
      const again = await new NodeToolchains({ root, registry, supported: SUPPORTED }).ensure(node22.version, (l) => lines.push(l));
      expect(lines[0]).toMatch(/is discarded: \.slipway-toolchain\.json is missing or unreadable/);
      expect(await version(again!, 'node')).toBe(`v${node22.version}`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 300_000);

  const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;
  rootOnly('the runtime sandbox runs a release on the Node it was built with', () => {
    const apps = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const running: RunningRelease[] = [];
    let home: string;

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
      for (const [i, env] of [{}, { NODE_OPTIONS: '--max-semi-space-size=1 --enable-source-maps' }].entries()) {
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
});
