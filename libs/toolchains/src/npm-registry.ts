import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { ToolchainError } from './toolchain-error.js';

/** One published version as the registry's abbreviated metadata lists it. */
export interface RegistryVersion {
  version: string;
  engines?: { node?: string };
  dist: { integrity?: string; tarball: string };
}

export interface NpmRegistryOptions {
  /** Base URL, default `https://registry.npmjs.org`. */
  url?: string;
  /** Whole-request limit for metadata, ms. */
  metadataTimeoutMs?: number;
  /** Whole-download limit for one tarball, ms. */
  downloadTimeoutMs?: number;
  /** A tarball larger than this is refused. */
  maxTarballBytes?: number;
}

/**
 * The npm registry, read-only: version lists (abbreviated metadata) and tarballs whose bytes must
 * match the `dist.integrity` (sha512) the registry published, or nothing is kept.
 */
export class NpmRegistry {
  readonly url: string;

  constructor(private readonly options: NpmRegistryOptions = {}) {
    this.url = (options.url ?? 'https://registry.npmjs.org').replace(/\/+$/, '');
  }

  async versions(name: string): Promise<Map<string, RegistryVersion>> {
    let body: { versions?: Record<string, RegistryVersion> };
    try {
      const res = await fetch(`${this.url}/${name}`, {
        headers: { accept: 'application/vnd.npm.install-v1+json' },
        signal: AbortSignal.timeout(this.options.metadataTimeoutMs ?? 60_000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = (await res.json()) as typeof body;
    } catch (error) {
      throw new ToolchainError('node_unavailable', `the package registry ${this.url} could not list ${name}: ${(error as Error).message}`);
    }
    return new Map(Object.entries(body.versions ?? {}).filter(([, v]) => typeof v?.dist?.tarball === 'string'));
  }

  /** Downloads `version`'s tarball to `file`; throws (and leaves no file) unless its sha512 is the published one. */
  async download(name: string, version: RegistryVersion, file: string): Promise<void> {
    const expected = /(?:^|\s)sha512-([A-Za-z0-9+/]{86}==)(?:\s|$)/.exec(version.dist.integrity ?? '')?.[1];
    const what = `${name}@${version.version}`;
    if (!expected) throw new ToolchainError('node_unavailable', `the registry publishes no sha512 integrity for ${what}; it is not used`);
    // The tarball must come from the registry that published its integrity, not from wherever metadata points.
    if (new URL(version.dist.tarball).origin !== new URL(this.url).origin)
      throw new ToolchainError('node_unavailable', `${what}'s tarball is not on ${this.url}; it is not used`);
    const max = this.options.maxTarballBytes ?? 256 * 1024 * 1024;
    const hash = createHash('sha512');
    try {
      const res = await fetch(version.dist.tarball, { signal: AbortSignal.timeout(this.options.downloadTimeoutMs ?? 10 * 60_000) });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      const out = createWriteStream(file, { mode: 0o600 });
      const closed = new Promise<void>((resolve, reject) => {
        out.on('close', resolve);
        out.on('error', reject);
      });
      let bytes = 0;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += chunk.length;
          if (bytes > max) throw new Error(`larger than ${max} bytes`);
          hash.update(chunk);
          if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
        }
      } finally {
        out.end();
        await closed;
      }
    } catch (error) {
      await rm(file, { force: true });
      throw new ToolchainError('node_unavailable', `${what} could not be downloaded from ${this.url}: ${(error as Error).message}`);
    }
    if (hash.digest('base64') !== expected) {
      await rm(file, { force: true });
      throw new ToolchainError('node_unavailable', `${what} from ${this.url} does not match its published sha512 integrity; it was discarded`);
    }
  }
}
