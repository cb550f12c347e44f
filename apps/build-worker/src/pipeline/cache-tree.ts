import { chmod, lchown, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CacheEntryRejected, linkStaysInTree, type Manifest, type ManifestEntry } from './cache-manifest.js';
import { CopyBudgetExceeded, copyFilesHashed } from './tree-copier.js';

export interface Owner {
  uid: number;
  gid: number;
}

/** The install's result cannot be cached (a link leaving the workspace, a device, too big…). */
export class NotCacheable extends Error {
  override readonly name = 'NotCacheable';
}

type Kind = 'dir' | 'file' | 'link' | 'other';

/** Every path under `root` (parents first, never following a link), as lstat sees it. */
async function walk(
  root: string,
  maxEntries: number,
  tooMany: (count: number) => Error,
  check?: (path: string, kind: Kind) => void,
): Promise<{ path: string; kind: Kind }[]> {
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

/**
 * Copies an installed `node_modules` (`source`) into `dest` (a new directory in the cache),
 * recording every file's digest and mode and every link's target. Links must stay inside the
 * workspace; anything else than directories, files and such links makes the install uncacheable.
 * Cache copies are root-only (0600/0700); the modes to restore are in the manifest.
 */
export async function snapshotTree(
  source: string,
  dest: string,
  limits: { maxBytes: number; maxEntries: number },
): Promise<{ entries: ManifestEntry[]; bytes: number }> {
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
  const copied = await copyFilesHashed(
    files.map((entry) => ({ from: join(source, entry.path), to: join(dest, entry.path), mode: 0o600 })),
    { maxBytes: limits.maxBytes },
  ).catch((error: unknown) => {
    if (error instanceof CopyBudgetExceeded) throw new NotCacheable(`node_modules is larger than the cache allows (${limits.maxBytes} bytes)`);
    throw error instanceof CacheEntryRejected ? new NotCacheable(error.message) : error;
  });
  files.forEach((entry, i) => {
    const { size, sha256, sourceMode } = copied[i]!;
    Object.assign(entry, { mode: sourceMode, size, sha256 });
    bytes += size;
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
  const found = await walk(
    tree,
    manifest.entries.length,
    () => new CacheEntryRejected('the entry holds paths the manifest does not list'),
    (path, kind) => {
      const entry = expected.get(path);
      if (!entry) throw new CacheEntryRejected(`node_modules/${path} is not in the manifest`);
      if (entry.type !== kind) throw new CacheEntryRejected(`node_modules/${path} is a ${kind}, the manifest says ${entry.type}`);
    },
  );
  if (found.length !== manifest.entries.length) throw new CacheEntryRejected(`${manifest.entries.length - found.length} paths of the manifest are missing`);

  await mkdir(dest, { mode: 0o700 });
  const dirs = manifest.entries.filter((entry) => entry.type === 'dir');
  for (const dir of dirs) await mkdir(join(dest, dir.path), { mode: 0o700 });
  const files = manifest.entries.filter((entry): entry is Extract<ManifestEntry, { type: 'file' }> => entry.type === 'file');
  await copyFilesHashed(
    files.map((entry) => ({ from: join(tree, entry.path), to: join(dest, entry.path), mode: entry.mode, expected: entry })),
    { owner },
  );
  for (const entry of manifest.entries) {
    if (entry.type !== 'link') continue;
    const target = await readlink(join(tree, entry.path));
    if (target !== entry.target) throw new CacheEntryRejected(`node_modules/${entry.path} links to ${target}, the manifest says ${entry.target}`);
    await symlink(entry.target, join(dest, entry.path));
    if (owner) await lchown(join(dest, entry.path), owner.uid, owner.gid);
  }
  // Directory modes last (children first), so a read-only directory does not stop its own copy.
  for (const dir of [...dirs].reverse()) {
    if (owner) await lchown(join(dest, dir.path), owner.uid, owner.gid);
    await chmod(join(dest, dir.path), dir.mode);
  }
  if (owner) await lchown(dest, owner.uid, owner.gid);
  await chmod(dest, 0o755);
}
