import { execFile } from 'node:child_process';
import { appendFile, chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NodeToolchains, NpmRegistry, ToolchainError, type NodeToolchain } from '../src/index.js';

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
    // The cache is the machine's: another project's tests (run alongside, `--parallel`) may be
    // making the same version at this moment, so a `.tmp-` of theirs may show for a while; one of
    // ours left behind would stay, and fail this after the wait.
    const ours = [node22.version, node24.version].map((v) => `.tmp-${v}-`);
    const leftovers = async () => (await readdir(join(CACHE, 'node'))).filter((n) => ours.some((prefix) => n.startsWith(prefix)));
    for (const deadline = Date.now() + 120_000; (await leftovers()).length > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 500));
    expect(await leftovers()).toEqual([]);
  }, 180_000);

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
});
