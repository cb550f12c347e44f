import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NpmRegistry, PackageManagers, ToolchainError, type ManagerRequest } from '../src/index.js';

const run = promisify(execFile);
/** The machine cache shared with the Node toolchain tests and the build worker's e2e tests. */
const CACHE = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';
const registry = new NpmRegistry({ downloadTimeoutMs: 180_000 });
const request = (manager: ManagerRequest['manager'], extra: Partial<ManagerRequest> = {}): ManagerRequest => ({ manager, version: null, hash: null, ...extra });

async function versionOf(dir: string, command: string): Promise<string> {
  return (
    await run(join(dir, 'bin', command), ['--version'], { env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, HOME: tmpdir(), COREPACK_ENABLE_STRICT: '0' } })
  ).stdout.trim();
}

describe('package managers from the npm registry (real downloads, verified, cached)', () => {
  const managers = new PackageManagers({ root: CACHE, registry });

  beforeAll(async () => {
    await mkdir(CACHE, { recursive: true, mode: 0o755 });
  });

  it.each([
    ['pnpm from a v9 lockfile', request('pnpm', { pnpmLockfileVersion: '9.0' }), 'pnpm', 'pnpm', /^10\./],
    ['pnpm pinned by packageManager', request('pnpm', { version: '9.15.9' }), 'pnpm', 'pnpm', /^9\.15\.9$/],
    ['yarn classic', request('yarn'), 'yarn', 'yarn', /^1\.22\./],
    ['yarn berry', request('yarn', { yarnBerry: true }), '@yarnpkg/cli-dist', 'yarn', /^4\./],
    ['bun', request('bun'), '@oven/bun-linux-x64', 'bun', /^1\./],
    ['npm pinned by packageManager', request('npm', { version: '10.9.2' }), 'npm', 'npm', /^10\.9\.2$/],
  ] as const)(
    '%s: fetched, verified and runnable',
    async (_name, req, pkg, command, version) => {
      const dist = await managers.resolve(req);
      expect(dist).toMatchObject({ manager: req.manager, package: expect.stringContaining(pkg) });
      const made = await managers.ensure(dist!, null);
      expect(await versionOf(made.dir, command)).toMatch(version);
      // Read-only to everyone but the owner.
      await expect(run('runuser', ['-u', 'nobody', '--', 'sh', '-c', `touch ${join(made.dir, 'bin', 'x')}`])).rejects.toThrow();
    },
    300_000,
  );

  it("npm without a pinned version is the Node toolchain's own (nothing fetched)", async () => {
    await expect(managers.resolve(request('npm'))).resolves.toBeNull();
  });

  it('a version that is not published, or not exact, is package_manager_unavailable', async () => {
    await expect(managers.resolve(request('pnpm', { version: '9.99.99' }))).rejects.toMatchObject({
      code: 'package_manager_unavailable',
      message: expect.stringContaining('not published'),
    });
    await expect(managers.resolve(request('yarn', { version: '^4' }))).rejects.toMatchObject({
      code: 'package_manager_unavailable',
      message: expect.stringContaining('exact version'),
    });
    await expect(managers.resolve(request('bun', { version: '0.0.1' }))).rejects.toBeInstanceOf(ToolchainError);
  }, 60_000);

  it('corepack hashes: the published one passes, any other refuses the manager', async () => {
    const dist = (await managers.resolve(request('yarn', { version: '1.22.22' })))!;
    const integrity = (await registry.versions('yarn')).get('1.22.22')!.dist.integrity!;
    const sha512 = Buffer.from(integrity.replace(/^sha512-/, ''), 'base64').toString('hex');
    await expect(managers.ensure(dist, `sha512.${sha512}`)).resolves.toMatchObject({ version: '1.22.22' });
    const wrong = `sha512.${'0'.repeat(128)}`;
    await expect(managers.ensure(dist, wrong)).rejects.toMatchObject({
      code: 'package_manager_unavailable',
      message: expect.stringContaining('does not match'),
    });
    // sha224 (older corepack) is checked by fetching the tarball again.
    const tarball = Buffer.from(await (await fetch((await registry.versions('yarn')).get('1.22.22')!.dist.tarball)).arrayBuffer());
    await expect(managers.ensure(dist, `sha224.${createHash('sha224').update(tarball).digest('hex')}`)).resolves.toBeTruthy();
    await expect(managers.ensure(dist, 'md5.abcdef')).rejects.toMatchObject({ code: 'package_manager_unavailable' });
  }, 120_000);

  it('a cached manager whose command was changed is discarded and fetched again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pm-damaged-'));
    try {
      const first = new PackageManagers({ root, registry });
      const dist = (await first.resolve(request('yarn', { version: '1.22.22' })))!;
      const made = await first.ensure(dist, null);
      const file = join(made.dir, 'pkg', 'bin', 'yarn.js');
      const genuine = await readFile(file);
      await appendFile(file, '\nconsole.log("tampered")\n');
      const lines: string[] = [];
      const again = await new PackageManagers({ root, registry }).ensure(dist, null, (line) => lines.push(line));
      expect(lines.join('\n')).toMatch(/discarded: yarn is not the file that was verified/);
      expect(await readFile(join(again.dir, 'pkg', 'bin', 'yarn.js'))).toEqual(genuine);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("a tarball that does not match the registry's integrity is refused, nothing kept", async () => {
    const body = Buffer.from('not the real pnpm');
    let server: Server | undefined;
    const root = await mkdtemp(join(tmpdir(), 'pm-tampered-'));
    try {
      server = createServer((req, res) => {
        const base = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
        if (req.url === '/pnpm')
          return void res.end(
            JSON.stringify({
              versions: {
                '10.0.0': {
                  version: '10.0.0',
                  dist: { integrity: `sha512-${createHash('sha512').update('something else').digest('base64')}`, tarball: `${base}/pnpm-10.0.0.tgz` },
                },
              },
            }),
          );
        if (req.url === '/pnpm-10.0.0.tgz') return void res.end(body);
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const fake = new NpmRegistry({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const managers = new PackageManagers({ root, registry: fake });
      const dist = (await managers.resolve(request('pnpm', { version: '10.0.0' })))!;
      await expect(managers.ensure(dist, null)).rejects.toMatchObject({ code: 'package_manager_unavailable', message: expect.stringContaining('integrity') });
      await expect(run('ls', [join(root, 'pm', 'pnpm-10.0.0')])).rejects.toThrow();
      await writeFile(join(root, 'ok'), '');
    } finally {
      server?.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
