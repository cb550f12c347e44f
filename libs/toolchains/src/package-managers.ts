import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import type { NpmRegistry, RegistryVersion } from './npm-registry.js';
import { ToolchainError } from './toolchain-error.js';
import { fileHash, placeToolchain } from './toolchain-files.js';

const run = promisify(execFile);

/** Where a package manager is inside every build sandbox (read-only); `bin` is on PATH after the Node's. */
export const MANAGER_PATH = '/opt/slipway/pm';
export const MANAGER_BIN = `${MANAGER_PATH}/bin`;

export type ManagerName = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** What the project says: the manager, and (from `packageManager`) an exact version and corepack hash. */
export interface ManagerRequest {
  manager: ManagerName;
  /** Exact version from `packageManager` (`pnpm@9.15.0`), or null: chosen from the lockfile. */
  version: string | null;
  /** Corepack's `+<algorithm>.<hex>` suffix, e.g. `sha512.3f…`; checked against what is fetched. */
  hash: string | null;
  /** Yarn only: `berry` (yarn.lock with `__metadata`, or `.yarnrc.yml`), else classic. */
  yarnBerry?: boolean;
  /** pnpm only: the lockfile's `lockfileVersion` (chooses the pnpm major when none is declared). */
  pnpmLockfileVersion?: string | null;
}

/** The exact package a manager comes from on the npm registry, and its commands inside it. */
export interface ManagerDistribution {
  manager: ManagerName;
  version: string;
  /** Registry package fetched (`pnpm`, `@pnpm/exe.linux-x64`, `yarn`, `@yarnpkg/cli-dist`, `@oven/bun-linux-x64`, `npm`). */
  package: string;
  /** Command name → path inside the package. */
  bins: Record<string, string>;
  /** Where the choice came from. */
  source: 'packageManager' | 'lockfile' | 'default';
}

export interface ManagerToolchain extends ManagerDistribution {
  /** Host directory: `bin/<command>` links into `pkg/`. */
  dir: string;
}

const MARKER = '.slipway-manager.json';
interface Marker {
  package: string;
  version: string;
  integrity: string;
  /** sha256 of each command's file at install, checked on every use. */
  bins: Record<string, string>;
}

const CPU = process.arch === 'arm64' ? 'aarch64' : process.arch;

function hasAvx2(): Promise<boolean> {
  return readFile('/proc/cpuinfo', 'utf8').then(
    (text) => /\bavx2\b/.test(text),
    () => true,
  );
}

/**
 * Package managers from the npm registry with corepack's semantics: the exact version of
 * `packageManager` (and its `+sha…` hash) is honoured, else a version that fits the lockfile.
 * pnpm < 11, yarn classic, yarn berry (`@yarnpkg/cli-dist`, as corepack fetches it with
 * `COREPACK_NPM_REGISTRY`) and npm are JavaScript run by the project's Node; pnpm ≥ 11
 * (`@pnpm/exe.<platform>`) and bun (`@oven/bun-<platform>`) are native binaries. Every tarball is
 * verified against the registry's sha512 like the Node toolchain, unpacked once per machine into
 * `<root>/pm/<manager>-<version>` (private temporary directory, renamed into place, read-only to
 * all but its owner), and each command's file is re-hashed on every use. A manager or version the
 * registry does not have, or a hash that does not match, is `package_manager_unavailable`.
 */
export class PackageManagers {
  private readonly ready = new Map<string, Promise<ManagerToolchain>>();

  constructor(private readonly options: { root: string; registry: NpmRegistry }) {}

  /** The exact distribution for a request; null for npm without a declared version (the Node toolchain's own npm). */
  async resolve(request: ManagerRequest): Promise<ManagerDistribution | null> {
    const { manager } = request;
    if (request.version !== null && !semver.valid(request.version)) {
      throw new ToolchainError(
        'package_manager_unavailable',
        `packageManager "${manager}@${request.version}" is not an exact version (corepack needs one, e.g. ${manager}@${manager === 'bun' ? '1.2.0' : '10.0.0'})`,
      );
    }
    if (manager === 'npm' && request.version === null) return null;
    const source: ManagerDistribution['source'] = request.version
      ? 'packageManager'
      : manager === 'pnpm' && request.pnpmLockfileVersion
        ? 'lockfile'
        : manager === 'yarn'
          ? 'lockfile'
          : 'default';
    const pkg = await this.packageFor(request);
    const listed = await this.versions(pkg.name);
    let version = request.version;
    if (version === null) {
      version = semver.rsort([...listed.keys()].filter((v) => semver.valid(v) && !semver.prerelease(v) && semver.satisfies(v, pkg.range!)))[0] ?? null;
      if (!version) throw new ToolchainError('package_manager_unavailable', `${this.options.registry.url} has no ${pkg.name} ${pkg.range} for ${manager}`);
    } else if (!listed.has(version)) {
      throw new ToolchainError(
        'package_manager_unavailable',
        `${manager} ${version} (packageManager) is not published as ${pkg.name}@${version} on ${this.options.registry.url}; use a released version`,
      );
    }
    return { manager, version, package: pkg.name, bins: pkg.bins(version), source };
  }

  private versions(name: string): Promise<Map<string, RegistryVersion>> {
    return this.options.registry.versions(name).catch((error: Error) => {
      throw new ToolchainError('package_manager_unavailable', error.message);
    });
  }

  /** The registry package (and, with no declared version, the range) a request is served from. */
  private async packageFor(request: ManagerRequest): Promise<{ name: string; range?: string; bins: (version: string) => Record<string, string> }> {
    const declared = request.version;
    switch (request.manager) {
      case 'npm':
        return { name: 'npm', bins: () => ({ npm: 'bin/npm-cli.js', npx: 'bin/npx-cli.js' }) };
      case 'pnpm': {
        const lock = Number.parseFloat(request.pnpmLockfileVersion ?? '9');
        const range = lock >= 9 ? '10.x' : lock >= 6 ? '8.x' : '7.x';
        const native = declared !== null && semver.major(declared) >= 11;
        if (native) return { name: `@pnpm/exe.linux-${process.arch}`, bins: () => ({ pnpm: 'pnpm' }) };
        return { name: 'pnpm', range, bins: () => ({ pnpm: 'bin/pnpm.cjs', pnpx: 'bin/pnpx.cjs' }) };
      }
      case 'yarn': {
        const berry = declared !== null ? semver.major(declared) >= 2 : Boolean(request.yarnBerry);
        if (berry) return { name: '@yarnpkg/cli-dist', range: '4.x', bins: () => ({ yarn: 'bin/yarn.js', yarnpkg: 'bin/yarn.js' }) };
        return { name: 'yarn', range: '1.x', bins: () => ({ yarn: 'bin/yarn.js', yarnpkg: 'bin/yarn.js' }) };
      }
      case 'bun': {
        // Bun's default x64 build needs AVX2; the `-baseline` build runs on any x86-64.
        const baseline = process.arch === 'x64' && !(await hasAvx2()) ? '-baseline' : '';
        return { name: `@oven/bun-linux-${CPU}${baseline}`, range: '1.x', bins: () => ({ bun: 'bin/bun', bunx: 'bin/bun' }) };
      }
    }
  }

  /** The verified manager on this machine (fetched once); ToolchainError `package_manager_unavailable` otherwise. */
  ensure(dist: ManagerDistribution, hash: string | null, log: (line: string) => void = () => undefined): Promise<ManagerToolchain> {
    const key = `${dist.package}@${dist.version}`;
    let pending = this.ready.get(key);
    if (!pending) {
      pending = this.load(dist, log);
      pending.catch(() => this.ready.delete(key));
      this.ready.set(key, pending);
    }
    // The hash is the project's: checked for every deploy, not only the one that fetched.
    return hash ? pending.then(async (made) => (await this.checkHash(dist, made, hash), made)) : pending;
  }

  dirOf(dist: Pick<ManagerDistribution, 'manager' | 'version' | 'package'>): string {
    const flavour = dist.package === '@yarnpkg/cli-dist' ? 'yarn-berry' : dist.manager;
    return join(this.options.root, 'pm', `${flavour}-${dist.version}`);
  }

  private async load(dist: ManagerDistribution, log: (line: string) => void): Promise<ManagerToolchain> {
    const dir = this.dirOf(dist);
    const cached = await this.check(dir, dist);
    if (cached === true) return { ...dist, dir };
    if (cached) {
      log(`the cached ${dist.manager} ${dist.version} is discarded: ${cached}`);
      const aside = join(this.options.root, 'pm', `.discarded-${randomUUID()}`);
      await rename(dir, aside).catch(() => undefined);
      await rm(aside, { recursive: true, force: true });
    }
    const began = Date.now();
    await this.install(dist, dir);
    log(`${dist.manager} ${dist.version} (${dist.package}) fetched from ${this.options.registry.url} and verified in ${Date.now() - began} ms`);
    return { ...dist, dir };
  }

  /** true: whole and unchanged; a string: why it is damaged; null: absent. */
  private async check(dir: string, dist: ManagerDistribution): Promise<true | string | null> {
    let marker: Marker;
    try {
      marker = JSON.parse(await readFile(join(dir, MARKER), 'utf8')) as Marker;
    } catch (error) {
      const absent =
        (error as NodeJS.ErrnoException).code === 'ENOENT' &&
        !(await stat(dir).then(
          () => true,
          () => false,
        ));
      return absent ? null : `${MARKER} is missing or unreadable`;
    }
    if (marker.package !== dist.package || marker.version !== dist.version) return `it says it is ${marker.package}@${marker.version}`;
    for (const [command, path] of Object.entries(dist.bins)) {
      const actual = await fileHash(join(dir, 'pkg', path), 'sha256').catch(() => 'missing');
      if (actual !== marker.bins[command]) return `${command} is ${actual === 'missing' ? 'missing' : 'not the file that was verified at install'}`;
    }
    return true;
  }

  private async install(dist: ManagerDistribution, dir: string): Promise<void> {
    const registry = this.options.registry;
    const version = (await this.versions(dist.package)).get(dist.version);
    if (!version) throw new ToolchainError('package_manager_unavailable', `${registry.url} has no ${dist.package}@${dist.version}`);
    await mkdir(join(this.options.root, 'pm'), { recursive: true, mode: 0o755 });
    await chmod(this.options.root, 0o755);
    await chmod(join(this.options.root, 'pm'), 0o755);
    const tmp = join(this.options.root, 'pm', `.tmp-${randomUUID()}`);
    try {
      await mkdir(join(tmp, 'pkg'), { recursive: true, mode: 0o700 });
      await mkdir(join(tmp, 'bin'));
      await this.unpack(dist, version, tmp);
      const bins: Record<string, string> = {};
      for (const [command, path] of Object.entries(dist.bins)) {
        const file = join(tmp, 'pkg', path);
        bins[command] = await fileHash(file, 'sha256').catch(() => {
          throw new ToolchainError(
            'package_manager_unavailable',
            `${dist.package}@${dist.version} has no ${path}; it is not a ${dist.manager} this platform knows how to run`,
          );
        });
        await chmod(file, 0o755);
        await symlink(`../pkg/${path}`, join(tmp, 'bin', command));
      }
      const marker: Marker = { package: dist.package, version: dist.version, integrity: version.dist.integrity!, bins };
      if ((await placeToolchain(tmp, dir, MARKER, marker)) === 'raced') {
        // Another deploy finished the same version first: use its copy if it is whole.
        if ((await this.check(dir, dist)) !== true)
          throw new ToolchainError('package_manager_unavailable', `${dist.manager} ${dist.version} in ${dir} is damaged`);
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  private async unpack(dist: ManagerDistribution, version: RegistryVersion, tmp: string): Promise<void> {
    const file = join(tmp, '.package.tgz');
    await this.options.registry.download(dist.package, version, file).catch((error: Error) => {
      throw new ToolchainError('package_manager_unavailable', error.message);
    });
    try {
      await run('tar', ['-xzf', file, '-C', join(tmp, 'pkg'), '--strip-components=1', '--no-same-owner'], { maxBuffer: 1024 * 1024 });
    } catch (error) {
      throw new ToolchainError(
        'package_manager_unavailable',
        `${dist.package}@${dist.version} could not be unpacked: ${(error as Error).message.slice(0, 300)}`,
      );
    } finally {
      await rm(file, { force: true });
    }
  }

  /**
   * Corepack's `+<algorithm>.<hex>`: the digest of the file corepack would fetch — the npm
   * tarball, or for yarn berry its single-file `bin/yarn.js` (what repo.yarnpkg.com serves). The
   * tarball's is checked from the registry's published sha512/sha1, or by fetching it again.
   */
  private async checkHash(dist: ManagerDistribution, made: ManagerToolchain, hash: string): Promise<void> {
    const match = /^(sha1|sha224|sha256|sha384|sha512)\.([0-9a-f]+)$/i.exec(hash);
    const wrong = (why: string) =>
      new ToolchainError('package_manager_unavailable', `packageManager "${dist.manager}@${dist.version}+${hash.slice(0, 24)}…" ${why}; nothing was installed`);
    if (!match) throw wrong('has a hash this platform cannot read (expected +sha512.<hex>, +sha256.<hex>, +sha224.<hex> or +sha1.<hex>)');
    const algorithm = match[1]!.toLowerCase();
    const expected = match[2]!.toLowerCase();
    // The package corepack fetches: for pnpm ≥ 11 the `pnpm` wrapper package, not the native binary we run.
    const corepackPackage = dist.package.startsWith('@pnpm/exe.') ? 'pnpm' : dist.package;
    const published = (await this.versions(corepackPackage)).get(dist.version);
    const candidates: string[] = [];
    if (published?.dist.integrity && algorithm === 'sha512') {
      const b64 = /sha512-([A-Za-z0-9+/=]+)/.exec(published.dist.integrity)?.[1];
      if (b64) candidates.push(Buffer.from(b64, 'base64').toString('hex'));
    }
    if (published && algorithm === 'sha1' && (published.dist as { shasum?: string }).shasum) candidates.push((published.dist as { shasum?: string }).shasum!);
    if (dist.package === '@yarnpkg/cli-dist') candidates.push(await fileHash(join(made.dir, 'pkg', 'bin', 'yarn.js'), algorithm));
    if (!candidates.includes(expected) && published && algorithm !== 'sha512' && algorithm !== 'sha1') {
      const file = join(this.options.root, 'pm', `.hash-${randomUUID()}.tgz`);
      try {
        await this.options.registry.download(corepackPackage, published, file);
        candidates.push(await fileHash(file, algorithm));
      } catch (error) {
        throw wrong(`could not be checked (${(error as Error).message})`);
      } finally {
        await rm(file, { force: true });
      }
    }
    if (!candidates.includes(expected)) throw wrong(`does not match the ${algorithm} of ${corepackPackage}@${dist.version} on ${this.options.registry.url}`);
  }
}
