import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lchown, lstat, mkdir, open, readdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CacheEntryRejected, cacheSealKey, headerBytes, openManifest, sealManifest, type CacheKey, type Manifest } from './cache-manifest.js';
import { NotCacheable, restoreTree, snapshotTree, type Owner } from './cache-tree.js';
import { openProjectFile } from './project-file.js';

/** Entries kept per application (the most recently used); older ones are evicted. */
export const ENTRIES_PER_APPLICATION = 3;
/** Paths one entry may hold. */
const MAX_ENTRY_PATHS = 500_000;
/** Unfinished writes and discarded entries older than this are swept by eviction. */
const STALE_MS = 60 * 60_000;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A miss: no entry (`reason` null), an entry that was discarded, or a cache that cannot be used right now. */
export type RestoreResult = { hit: true; files: number; bytes: number; ms: number } | { hit: false; reason: string | null; discarded?: boolean };
export type SaveResult = { saved: true; files: number; bytes: number; ms: number } | { saved: false; reason: string };

export interface DependencyCacheOptions {
  /** Root-only (0700) tree of entries: `<root>/<applicationId>/<lockfile sha256>/<toolchain>/`. */
  root: string;
  /** Per-application package-manager download caches (bound into that application's installs). */
  downloads: string;
  masterKey: string;
  /** Bytes all entries together may hold (0: no cache). */
  maxBytes: number;
  /** Bytes one application's entries may hold together (default: `maxBytes`); least recently used go first. */
  appMaxBytes?: number;
}

/**
 * Installed `node_modules` per application, written only by the worker after a successful
 * install and restored as a verified copy. Each entry is `tree/` (the files, root-only) plus
 * `manifest` (every path's type, mode, size and sha256 or link target), sealed with an HMAC keyed
 * from the master key and bound to the application, lockfile digest, package manager and Node.
 * Anything that does not verify is discarded and never served; the build then installs afresh.
 */
export class DependencyCache {
  private readonly sealKey: Buffer;
  private ready: Promise<void> | undefined;

  constructor(private readonly options: DependencyCacheOptions) {
    this.sealKey = cacheSealKey(options.masterKey);
  }

  get enabled(): boolean {
    return this.options.maxBytes > 0 && this.appMaxBytes > 0;
  }

  private get appMaxBytes(): number {
    return Math.min(this.options.appMaxBytes ?? this.options.maxBytes, this.options.maxBytes);
  }

  /** The application's package-manager download cache: its own, and outside the entries' tree. */
  async downloadCacheDir(applicationId: string, owner?: Owner): Promise<string> {
    if (!SAFE_ID.test(applicationId)) throw new Error(`unexpected application id ${JSON.stringify(applicationId)}`);
    // Traversable (the build user's bwrap must reach its own directory) but not listable.
    await mkdir(this.options.downloads, { recursive: true, mode: 0o711 });
    await chmod(this.options.downloads, 0o711);
    const dir = join(this.options.downloads, applicationId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // In-process (a `chown` child could be killed by a signal meant for the worker's group).
    if (owner) await lchown(dir, owner.uid, owner.gid);
    return dir;
  }

  /**
   * The key of a workspace's install (`manager`: name@version; `node`: the Node it ran on); the
   * lockfile is read following links inside the workspace only (`openProjectFile`).
   */
  async keyFor(applicationId: string, workspace: string, lockfile: string, manager: string, node: string = process.version): Promise<CacheKey> {
    if (!SAFE_ID.test(applicationId)) throw new Error(`unexpected application id ${JSON.stringify(applicationId)}`);
    const opened = await openProjectFile(workspace, lockfile);
    if (!opened) throw new Error(`${lockfile} is not a regular file inside the project`);
    try {
      const lockfileSha256 = createHash('sha256')
        .update(await opened.handle.readFile())
        .digest('hex');
      return {
        applicationId,
        lockfile,
        lockfileSha256,
        manager,
        node: node.startsWith('v') ? node : `v${node}`,
        platform: process.platform,
        arch: process.arch,
      };
    } finally {
      await opened.handle.close();
    }
  }

  private entryDir(key: CacheKey): string {
    const toolchain = `${key.manager}-node${key.node}-${key.platform}-${key.arch}`.replace(/[^A-Za-z0-9._-]/g, '_');
    return join(this.options.root, key.applicationId, key.lockfileSha256, toolchain);
  }

  /** The cache root exists, is a real directory owned by the worker, and is 0700. */
  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.options.root, { recursive: true, mode: 0o700 });
      const info = await lstat(this.options.root);
      if (!info.isDirectory() || info.uid !== process.getuid?.()) throw new Error(`${this.options.root} must be a directory owned by the worker's user`);
      await chmod(this.options.root, 0o700);
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  /** Copies the entry into `<workspace>/node_modules` (verified) or reports why not. */
  async restore(key: CacheKey, workspace: string, owner?: Owner): Promise<RestoreResult> {
    if (!this.enabled) return { hit: false, reason: null };
    const started = Date.now();
    const unusable = await this.prepare().then(
      () => null,
      (error: Error) => error.message,
    );
    if (unusable) return { hit: false, reason: this.hide(`the dependency cache cannot be used: ${unusable}`) };
    const entry = this.entryDir(key);
    const dest = join(workspace, 'node_modules');
    try {
      const raw = await this.readManifest(entry);
      if (!raw) return { hit: false, reason: null };
      const manifest = openManifest(this.sealKey, raw, key);
      await restoreTree(join(entry, 'tree'), manifest, dest, owner);
      const now = new Date();
      await utimes(entry, now, now);
      return { hit: true, files: manifest.entries.filter((e) => e.type === 'file').length, bytes: manifest.bytes, ms: Date.now() - started };
    } catch (error) {
      await rm(dest, { recursive: true, force: true });
      // The workspace's disk is full (its budget): the entry is fine, the deploy fails with build_disk_exceeded.
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC' || (error as NodeJS.ErrnoException).code === 'EDQUOT') throw error;
      await this.discard(key.applicationId, entry);
      const reason = error instanceof CacheEntryRejected ? error.message : `it could not be read (${(error as Error).message})`;
      return { hit: false, reason: this.hide(reason.replaceAll(`${join(entry, 'tree')}/`, 'node_modules/')), discarded: true };
    }
  }

  private async readManifest(entry: string): Promise<Buffer | null> {
    const handle = await open(join(entry, 'manifest'), constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      if (error.code === 'ELOOP') throw new CacheEntryRejected('the manifest is a link');
      throw error;
    });
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  /** Stores `<workspace>/node_modules` after a successful install; never replaces an existing entry. */
  async save(key: CacheKey, workspace: string): Promise<SaveResult> {
    if (!this.enabled) return { saved: false, reason: 'the dependency cache is switched off' };
    const started = Date.now();
    const unusable = await this.prepare().then(
      () => null,
      (error: Error) => error.message,
    );
    if (unusable) return { saved: false, reason: this.hide(`the dependency cache cannot be used: ${unusable}`) };
    const entry = this.entryDir(key);
    const appDir = join(this.options.root, key.applicationId);
    await mkdir(appDir, { recursive: true, mode: 0o700 });
    const temp = join(appDir, `.tmp-${randomBytes(6).toString('hex')}`);
    await mkdir(temp, { mode: 0o700 });
    try {
      const { entries, bytes } = await snapshotTree(join(workspace, 'node_modules'), join(temp, 'tree'), {
        maxBytes: this.appMaxBytes,
        maxEntries: MAX_ENTRY_PATHS,
      });
      const manifest: Manifest = { version: 1, key, createdAt: new Date().toISOString(), bytes, entries };
      await writeFile(join(temp, 'manifest'), sealManifest(this.sealKey, manifest), { mode: 0o600, flag: 'wx' });
      await mkdir(join(entry, '..'), { recursive: true, mode: 0o700 });
      try {
        await rename(temp, entry);
      } catch (error) {
        // Another worker stored the same key first: theirs is as good as ours.
        if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return { saved: false, reason: 'another build stored this key first' };
      }
      await this.evict().catch(() => undefined);
      return { saved: true, files: entries.filter((e) => e.type === 'file').length, bytes, ms: Date.now() - started };
    } catch (error) {
      const reason = error instanceof NotCacheable ? error.message : `the entry could not be written (${(error as Error).message})`;
      // (A full disk or the like: the deploy goes on without a cache entry.)
      return { saved: false, reason: this.hide(reason.replaceAll(`${workspace}/`, '')) };
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /** Reasons go to the tenant's step log: no host path of the cache in them. */
  private hide(text: string): string {
    return text.replaceAll(this.options.root, '$BUILD_DIR/cache');
  }

  /** Moves an entry aside (atomically, so no reader sees half of it) and deletes it. */
  private async discard(applicationId: string, entry: string): Promise<void> {
    const trash = join(this.options.root, applicationId, `.trash-${randomBytes(6).toString('hex')}`);
    const moved = await rename(entry, trash).then(
      () => true,
      () => false,
    );
    await rm(moved ? trash : entry, { recursive: true, force: true });
  }

  /**
   * Keeps the most recent ENTRIES_PER_APPLICATION entries per application, each application's
   * entries under `appMaxBytes` and the whole cache under `maxBytes` (least recently used go
   * first), so one application cannot push everyone else's out; sweeps stale temporaries and anything that
   * is not an entry (including the layout of older versions).
   */
  async evict(): Promise<void> {
    const entries: { dir: string; applicationId: string; used: number; bytes: number }[] = [];
    const now = Date.now();
    for (const applicationId of await readdir(this.options.root)) {
      const appDir = join(this.options.root, applicationId);
      for (const name of await readdir(appDir).catch(() => [])) {
        const path = join(appDir, name);
        if (name.startsWith('.tmp-') || name.startsWith('.trash-')) {
          if (now - (await lstat(path)).mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
          continue;
        }
        if (!/^[0-9a-f]{64}$/.test(name)) {
          await rm(path, { recursive: true, force: true });
          continue;
        }
        for (const toolchain of await readdir(path).catch(() => [])) {
          const dir = join(path, toolchain);
          const bytes = headerBytes((await this.readHead(dir)) ?? '');
          if (bytes === null) await this.discard(applicationId, dir);
          else entries.push({ dir, applicationId, used: (await lstat(dir)).mtimeMs, bytes });
        }
      }
    }
    entries.sort((a, b) => b.used - a.used);
    const perApp = new Map<string, { count: number; bytes: number }>();
    let total = 0;
    for (const entry of entries) {
      const app = perApp.get(entry.applicationId) ?? { count: 0, bytes: 0 };
      perApp.set(entry.applicationId, app);
      if (app.count + 1 > ENTRIES_PER_APPLICATION || app.bytes + entry.bytes > this.appMaxBytes || total + entry.bytes > this.options.maxBytes) {
        await this.discard(entry.applicationId, entry.dir);
        continue;
      }
      app.count += 1;
      app.bytes += entry.bytes;
      total += entry.bytes;
    }
  }

  private async readHead(entry: string): Promise<string | null> {
    const handle = await open(join(entry, 'manifest'), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
    if (!handle) return null;
    try {
      const buffer = Buffer.alloc(256);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  }
}
