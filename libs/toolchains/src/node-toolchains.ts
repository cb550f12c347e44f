import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { NpmRegistry, type RegistryVersion } from './npm-registry.js';
import { PackageManagers } from './package-managers.js';
import { resolveNodeVersion, type NodeRequest } from './node-versions.js';
import { ToolchainError } from './toolchain-error.js';
import { fileHash, placeToolchain } from './toolchain-files.js';

const run = promisify(execFile);

/** Where a toolchain is inside every sandbox (read-only), and its `bin` first on PATH. */
export const TOOLCHAIN_PATH = '/opt/slipway/node';
export const TOOLCHAIN_BIN = `${TOOLCHAIN_PATH}/bin`;

/** The machine's CA bundle (Debian's); bound read-only into every sandbox with the rest of /etc/ssl. */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * Environment a toolchain's Node needs to trust what the platform's Node trusts: official builds
 * carry their own CA list and ignore the machine's store, so a CA the operator added (an
 * intercepting proxy's, a private registry's) would break `npm install` on them but not on the
 * platform's Node. NODE_EXTRA_CA_CERTS adds the machine's bundle to Node's own list.
 */
export function toolchainEnv(): Record<string, string> {
  return existsSync(SYSTEM_CA_BUNDLE) ? { NODE_EXTRA_CA_CERTS: SYSTEM_CA_BUNDLE } : {};
}

/** The npm major each Node major ships with (its own release bundles that npm major). */
export const NPM_MAJOR_FOR_NODE: Readonly<Record<number, number>> = { 20: 10, 22: 10, 24: 11 };

const MARKER = '.slipway-toolchain.json';

export interface NodeToolchain {
  version: string;
  /** Host directory: `bin/node`, `bin/npm`, `bin/npx`, `lib/node_modules/npm`. */
  dir: string;
  npmVersion: string;
}

interface Marker {
  version: string;
  nodeIntegrity: string;
  nodeSha256: string;
  npm: { version: string; integrity: string };
}

export interface NodeToolchainsOptions {
  /** `<SLIPWAY_HOME>/toolchains`; versions live in `<root>/node/<version>`. */
  root: string;
  registry: NpmRegistry;
  supported: readonly number[];
  /** The major for projects that declare none (`LIMITS.node.defaultMajor`); absent: the platform's Node. */
  defaultMajor?: number;
  /** The platform's own Node, without `v` (default: this process's). */
  platform?: string;
}

const sha256 = (file: string) => fileHash(file, 'sha256');

/**
 * Node.js builds from the npm registry (`node-linux-<arch>`, the official binaries, plus the `npm`
 * its release ships with), verified against the published sha512 and unpacked once per machine
 * into `<root>/node/<version>`: made in a private temporary directory and renamed into place, so
 * concurrent deploys never see half a toolchain; read-only to everyone but its owner. A cached
 * entry whose `bin/node` no longer has the hash recorded at install is discarded and fetched again.
 */
export class NodeToolchains {
  readonly platform: string;
  private readonly ready = new Map<string, Promise<NodeToolchain>>();
  private readonly arch = `linux-${process.arch}`;

  constructor(private readonly options: NodeToolchainsOptions) {
    this.platform = options.platform ?? process.version.replace(/^v/, '');
  }

  /** The exact version for a declaration; ToolchainError `node_version_unsupported` or `node_unavailable`. */
  async resolve(request: NodeRequest | null): Promise<{ version: string; source: 'platform' | 'registry' }> {
    const result = await resolveNodeVersion(request, async () => [...(await this.options.registry.versions(`node-${this.arch}`)).keys()], {
      supported: this.options.supported,
      platform: this.platform,
      ...(this.options.defaultMajor === undefined ? {} : { defaultMajor: this.options.defaultMajor }),
    });
    if (!result.ok) throw new ToolchainError('node_version_unsupported', result.reason);
    return { version: result.version, source: result.source };
  }

  /** `null` for the platform's own Node (in `/usr`, already in every sandbox); the toolchain otherwise. */
  ensure(version: string, log: (line: string) => void = () => undefined): Promise<NodeToolchain | null> {
    if (version === this.platform) return Promise.resolve(null);
    if (!semver.valid(version) || !this.options.supported.includes(semver.major(version))) {
      return Promise.reject(
        new ToolchainError('node_version_unsupported', `Node.js ${version} is not offered here; supported majors: ${this.options.supported.join(', ')}`),
      );
    }
    let pending = this.ready.get(version);
    if (!pending) {
      pending = this.load(version, log);
      pending.catch(() => this.ready.delete(version));
      this.ready.set(version, pending);
    }
    return pending;
  }

  dirOf(version: string): string {
    return join(this.options.root, 'node', version);
  }

  private async load(version: string, log: (line: string) => void): Promise<NodeToolchain> {
    const dir = this.dirOf(version);
    const cached = await this.check(dir, version);
    if (cached.ok) return cached.toolchain;
    if (cached.reason) {
      log(`the cached Node.js ${version} is discarded: ${cached.reason}`);
      await this.discard(dir);
    }
    const began = Date.now();
    const made = await this.install(version, dir);
    log(`Node.js ${version} (npm ${made.npmVersion}) fetched from ${this.options.registry.url} and verified in ${Date.now() - began} ms`);
    return made;
  }

  /** `ok` with the toolchain; `ok: false` with no reason when absent, with a reason when damaged. */
  private async check(dir: string, version: string): Promise<{ ok: true; toolchain: NodeToolchain } | { ok: false; reason?: string }> {
    let marker: Marker;
    try {
      marker = JSON.parse(await readFile(join(dir, MARKER), 'utf8')) as Marker;
    } catch (error) {
      // Absent: nothing there. Anything else there without a readable marker is damaged (never used).
      const absent =
        (error as NodeJS.ErrnoException).code === 'ENOENT' &&
        !(await stat(dir).then(
          () => true,
          () => false,
        ));
      return absent ? { ok: false } : { ok: false, reason: `${MARKER} is missing or unreadable` };
    }
    if (marker.version !== version) return { ok: false, reason: `it says it is ${String(marker.version)}` };
    const actual = await sha256(join(dir, 'bin', 'node')).catch(() => 'missing');
    if (actual !== marker.nodeSha256)
      return { ok: false, reason: `bin/node is ${actual === 'missing' ? 'missing' : 'not the binary that was verified at install'}` };
    return { ok: true, toolchain: { version, dir, npmVersion: marker.npm.version } };
  }

  private async discard(dir: string): Promise<void> {
    const aside = join(this.options.root, 'node', `.discarded-${randomUUID()}`);
    await rename(dir, aside).catch(() => undefined);
    await rm(aside, { recursive: true, force: true });
  }

  private async install(version: string, dir: string): Promise<NodeToolchain> {
    const registry = this.options.registry;
    const nodePackage = `node-${this.arch}`;
    const node = (await registry.versions(nodePackage)).get(version);
    if (!node) throw new ToolchainError('node_unavailable', `${registry.url} has no ${nodePackage}@${version} (the official Node.js build for this machine)`);
    const npm = await this.npmFor(version);
    await mkdir(join(this.options.root, 'node'), { recursive: true, mode: 0o755 });
    await chmod(this.options.root, 0o755);
    await chmod(join(this.options.root, 'node'), 0o755);
    const tmp = join(this.options.root, 'node', `.tmp-${version}-${randomUUID()}`);
    try {
      await mkdir(join(tmp, 'lib', 'node_modules', 'npm'), { recursive: true, mode: 0o700 });
      await this.unpack(nodePackage, node, tmp, tmp);
      await this.unpack('npm', npm, join(tmp, 'lib', 'node_modules', 'npm'), tmp);
      await mkdir(join(tmp, 'bin'), { recursive: true });
      await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(tmp, 'bin', 'npm'));
      await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(tmp, 'bin', 'npx'));
      const marker: Marker = {
        version,
        nodeIntegrity: node.dist.integrity!,
        nodeSha256: await sha256(join(tmp, 'bin', 'node')),
        npm: { version: npm.version, integrity: npm.dist.integrity! },
      };
      if ((await placeToolchain(tmp, dir, MARKER, marker)) === 'raced') {
        // Another deploy (or process) finished the same version first: use its copy if it is whole.
        const other = await this.check(dir, version);
        if (!other.ok) throw new ToolchainError('node_unavailable', `Node.js ${version} in ${dir} is damaged (${other.reason ?? 'incomplete'})`);
        return other.toolchain;
      }
      return { version, dir, npmVersion: npm.version };
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  private async npmFor(version: string): Promise<RegistryVersion> {
    const major = NPM_MAJOR_FOR_NODE[semver.major(version)];
    if (major === undefined) throw new ToolchainError('node_version_unsupported', `no npm is known to go with Node.js ${version}`);
    const all = [...(await this.options.registry.versions('npm')).values()];
    const fit = all
      .filter((v) => semver.valid(v.version) && !semver.prerelease(v.version) && semver.major(v.version) === major)
      .filter((v) => !v.engines?.node || semver.satisfies(version, v.engines.node))
      .sort((a, b) => semver.rcompare(a.version, b.version))[0];
    if (!fit) throw new ToolchainError('node_unavailable', `${this.options.registry.url} has no npm ${major}.x that runs on Node.js ${version}`);
    return fit;
  }

  /** Verified download of one package, extracted (without its `package/` prefix) into `into`. */
  private async unpack(name: string, version: RegistryVersion, into: string, tmp: string): Promise<void> {
    const file = join(tmp, `.${name}.tgz`);
    await this.options.registry.download(name, version, file);
    try {
      await run('tar', ['-xzf', file, '-C', into, '--strip-components=1', '--no-same-owner'], { maxBuffer: 1024 * 1024 });
    } catch (error) {
      throw new ToolchainError('node_unavailable', `${name}@${version.version} could not be unpacked: ${(error as Error).message.slice(0, 300)}`);
    } finally {
      await rm(file, { force: true });
    }
  }
}

/** Configuration both the build worker and the runtime read (same machine, same cache). */
export interface ToolchainConfig {
  SLIPWAY_HOME?: string | undefined;
  /** Default `<SLIPWAY_HOME or .slipway>/toolchains`. */
  NODE_TOOLCHAIN_DIR?: string | undefined;
  /** The npm registry Node.js builds come from, default `https://registry.npmjs.org`. */
  NODE_REGISTRY_URL?: string | undefined;
}

export function nodeToolchainsFor(config: ToolchainConfig, supported: readonly number[], defaultMajor?: number): NodeToolchains {
  return new NodeToolchains({
    ...(defaultMajor === undefined ? {} : { defaultMajor }),
    root: resolve(config.NODE_TOOLCHAIN_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'toolchains')),
    registry: new NpmRegistry({ url: config.NODE_REGISTRY_URL }),
    supported,
  });
}

/** The package managers (pnpm, yarn, bun, pinned npm), in the same machine cache as the Node toolchains. */
export function packageManagersFor(config: ToolchainConfig): PackageManagers {
  return new PackageManagers({
    root: resolve(config.NODE_TOOLCHAIN_DIR ?? join(config.SLIPWAY_HOME ?? '.slipway', 'toolchains')),
    registry: new NpmRegistry({ url: config.NODE_REGISTRY_URL }),
  });
}
