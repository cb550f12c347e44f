import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lchown, lstat, mkdir, open, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CacheEntryRejected, linkStaysInTree, type Manifest, type ManifestEntry } from './cache-manifest.js';

export interface Owner {
  uid: number;
  gid: number;
}

/** The install's result cannot be cached (a link leaving the workspace, a device, too big…). */
export class NotCacheable extends Error {
  override readonly name = 'NotCacheable';
}

type Kind = 'dir' | 'file' | 'link' | 'other';
const CHUNK = 1024 * 1024;
const PARALLEL = 32;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Every path under `root` (parents first, never following a link), as lstat sees it. */
async function walk(root: string, maxEntries: number, tooMany: (count: number) => Error, check?: (path: string, kind: Kind) => void): Promise<{ path: string; kind: Kind }[]> {
  const out: { path: string; kind: Kind }[] = [];
  const pending = [''];
  while (pending.length) {
    const dir = pending.shift()!;
    const children = await readdir(join(root, dir), { withFileTypes: true });
    children.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const child of children) {
      const path = dir ? `${dir}/${child.name}` : child.name;
      const kind: Kind = child.isDirectory() ? 'dir' : child.isFile() ? 'file' : child.isSymbolicLink() ? 'link' : 'other';
      check?.(path, kind);
      out.push({ path, kind });
      if (out.length > maxEntries) throw tooMany(out.length);
      if (kind === 'dir') pending.push(path);
    }
  }
  return out;
}

/** Runs `fn` over `items`, a few at a time; after the first failure no new item starts, and it throws once all lanes stopped. */
async function inParallel<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      try {
        await fn(items[next++]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(PARALLEL, items.length) }, lane));
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * Copies one regular file without following a link at `from`, hashing what it copies. With
 * `expected`, a size or digest that differs throws CacheEntryRejected (the caller removes the copy).
 */
async function copyHashed(from: string, to: string, mode: number, owner?: Owner, expected?: { size: number; sha256: string }): Promise<{ size: number; sha256: string; sourceMode: number }> {
  const source = await open(from, READ_FLAGS).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new CacheEntryRejected(`${from} is a link, not a file`);
    throw error;
  });
  try {
    const info = await source.stat();
    if (!info.isFile()) throw new CacheEntryRejected(`${from} is not a regular file`);
    if (expected && info.size !== expected.size) throw new CacheEntryRejected(`${from} has ${info.size} bytes, the manifest says ${expected.size}`);
    const target = await open(to, CREATE_FLAGS, 0o600);
    const hash = createHash('sha256');
    let size = 0;
    try {
      // Reads the size fstat gave (no extra read for end of file); the digest decides what it was.
      const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, info.size)));
      while (size < info.size) {
        const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, info.size - size), null);
        if (bytesRead === 0) break;
        const chunk = buffer.subarray(0, bytesRead);
        hash.update(chunk);
        size += bytesRead;
        await target.write(chunk);
      }
      if (owner) await target.chown(owner.uid, owner.gid);
      await target.chmod(mode);
    } finally {
      await target.close();
    }
    const sha256 = hash.digest('hex');
    if (expected && (sha256 !== expected.sha256 || size !== expected.size)) throw new CacheEntryRejected(`${from} does not match its digest in the manifest`);
    return { size, sha256, sourceMode: info.mode & 0o777 };
  } finally {
    await source.close();
  }
}

/**
 * Copies an installed `node_modules` (`source`) into `dest` (a new directory in the cache),
 * recording every file's digest and mode and every link's target. Links must stay inside the
 * workspace; anything else than directories, files and such links makes the install uncacheable.
 * Cache copies are root-only (0600/0700); the modes to restore are in the manifest.
 */
export async function snapshotTree(source: string, dest: string, limits: { maxBytes: number; maxEntries: number }): Promise<{ entries: ManifestEntry[]; bytes: number }> {
  const found = await walk(source, limits.maxEntries, (n) => new NotCacheable(`node_modules holds more than ${limits.maxEntries} entries (${n} so far)`));
  const entries: ManifestEntry[] = [];
  let bytes = 0;
  await mkdir(dest, { mode: 0o700 });
  for (const { path, kind } of found) {
    if (kind === 'other') throw new NotCacheable(`node_modules/${path} is not a file, directory or link`);
    if (kind === 'dir') {
      entries.push({ path, type: 'dir', mode: (await lstat(join(source, path))).mode & 0o777 });
      await mkdir(join(dest, path), { mode: 0o700 });
    } else if (kind === 'link') {
      const target = await readlink(join(source, path));
      if (!linkStaysInTree(path, target)) throw new NotCacheable(`node_modules/${path} links outside the workspace (${target})`);
      entries.push({ path, type: 'link', target });
    } else {
      entries.push({ path, type: 'file', mode: 0, size: 0, sha256: '' });
    }
  }
  const files = entries.filter((entry): entry is Extract<ManifestEntry, { type: 'file' }> => entry.type === 'file');
  await inParallel(files, async (entry) => {
    const { size, sha256, sourceMode } = await copyHashed(join(source, entry.path), join(dest, entry.path), 0o600).catch((error: unknown) => {
      throw error instanceof CacheEntryRejected ? new NotCacheable(error.message) : error;
    });
    Object.assign(entry, { mode: sourceMode, size, sha256 });
    bytes += size;
    if (bytes > limits.maxBytes) throw new NotCacheable(`node_modules is larger than the cache allows (${limits.maxBytes} bytes)`);
  });
  for (const entry of entries) if (entry.type === 'link') await symlink(entry.target, join(dest, entry.path));
  return { entries, bytes };
}

/**
 * Restores a cached tree into `dest` (which must not exist) as a verified copy: the tree on disk
 * must hold exactly the manifest's paths with the manifest's types, and every file's content must
 * match its digest. Throws CacheEntryRejected on the first difference; `dest` may then hold a
 * partial copy, which the caller removes before anything runs.
 */
export async function restoreTree(tree: string, manifest: Manifest, dest: string, owner?: Owner): Promise<void> {
  const expected = new Map(manifest.entries.map((entry) => [entry.path, entry]));
  const found = await walk(tree, manifest.entries.length, () => new CacheEntryRejected('the entry holds paths the manifest does not list'), (path, kind) => {
    const entry = expected.get(path);
    if (!entry) throw new CacheEntryRejected(`node_modules/${path} is not in the manifest`);
    if (entry.type !== kind) throw new CacheEntryRejected(`node_modules/${path} is a ${kind}, the manifest says ${entry.type}`);
  });
  if (found.length !== manifest.entries.length) throw new CacheEntryRejected(`${manifest.entries.length - found.length} paths of the manifest are missing`);

  await mkdir(dest, { mode: 0o700 });
  const dirs = manifest.entries.filter((entry) => entry.type === 'dir');
  for (const dir of dirs) await mkdir(join(dest, dir.path), { mode: 0o700 });
  await inParallel(manifest.entries, async (entry) => {
    if (entry.type === 'file') {
      await copyHashed(join(tree, entry.path), join(dest, entry.path), entry.mode, owner, entry);
    } else if (entry.type === 'link') {
      const target = await readlink(join(tree, entry.path));
      if (target !== entry.target) throw new CacheEntryRejected(`node_modules/${entry.path} links to ${target}, the manifest says ${entry.target}`);
      await symlink(entry.target, join(dest, entry.path));
      if (owner) await lchown(join(dest, entry.path), owner.uid, owner.gid);
    }
  });
  // Directory modes last (children first), so a read-only directory does not stop its own copy.
  for (const dir of [...dirs].reverse()) {
    if (owner) await lchown(join(dest, dir.path), owner.uid, owner.gid);
    await chmod(join(dest, dir.path), dir.mode);
  }
  if (owner) await lchown(dest, owner.uid, owner.gid);
  await chmod(dest, 0o755);
}
