import { lstat, mkdir, open, rename, rm, stat, symlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import tarStream from 'tar-stream';
import { CREATE_FILE, ensureParents, entrySegments } from './safe-extraction.js';
import { resolveLinkInTree } from './tree-links.js';

/** A release artifact that breaks the rules below; nothing of it is kept. */
export class UnsafeReleaseError extends Error {
  override readonly name = 'UnsafeReleaseError';
}

/** Entries up to this size are gathered in memory and written with one call; larger ones stream. */
const WHOLE_WRITE_BYTES = 4 * 1024 * 1024;

function segmentsOf(name: string): string[] {
  return entrySegments(name, () => new UnsafeReleaseError(`release entry with a name Slipway refuses: ${JSON.stringify(name)}`));
}

/** Parents made only as real directories (see `ensureParents`): no write ever goes through a link. */
function parentsOf(root: string, segments: string[], name: string, known: Set<string>): Promise<void> {
  return ensureParents(root, segments, known, {
    mode: 0o755,
    refuse: (parent) => new UnsafeReleaseError(`release entry ${JSON.stringify(name)} is below ${JSON.stringify(parent)}, which is not a directory`),
  });
}

function createFile(target: string, mode: number, name: string): Promise<FileHandle> {
  return open(target, CREATE_FILE, mode & 0o111 ? 0o755 : 0o644).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST' || error.code === 'ELOOP') throw new UnsafeReleaseError(`release entry ${JSON.stringify(name)} appears twice`);
    throw error;
  });
}

/**
 * Extracts a release artifact (`.tar.gz`) into `dir` once: into a temporary sibling, then
 * renamed, so a directory that exists is always complete. Only regular files, directories and
 * relative links are accepted; names are relative without `.`/`..`; no entry is written below a
 * link or over anything that exists (`O_CREAT|O_EXCL|O_NOFOLLOW`); hard links, devices and FIFOs
 * are refused. Once everything is written, every link is resolved again in the finished tree
 * and must stay inside it (a chain built from several entries included). Any breach throws
 * `UnsafeReleaseError` and leaves nothing behind.
 */
export async function extractRelease(artifact: Readable, dir: string): Promise<void> {
  if (await stat(dir).catch(() => null)) return;
  const temp = `${dir}.part-${randomBytes(4).toString('hex')}`;
  const root = resolve(temp);
  await mkdir(root, { recursive: true, mode: 0o755 });
  const extract = tarStream.extract();
  const feeding = pipeline(artifact, createGunzip(), extract);
  const links: string[][] = [];
  const known = new Set<string>();
  try {
    for await (const entry of extract) {
      const { name, type, linkname, mode } = entry.header;
      const segments = segmentsOf(name);
      await parentsOf(root, segments, name, known);
      const target = join(root, ...segments);
      if (type === 'file') {
        const handle = await createFile(target, mode ?? 0o644, name);
        if ((entry.header.size ?? 0) > WHOLE_WRITE_BYTES) {
          await pipeline(entry, handle.createWriteStream());
          continue;
        }
        // Small files (most of a release): gathered and written at once, without a stream each.
        try {
          const chunks: Buffer[] = [];
          for await (const chunk of entry) chunks.push(chunk as Buffer);
          await handle.writeFile(Buffer.concat(chunks));
        } finally {
          await handle.close();
        }
        continue;
      }
      entry.resume();
      if (type === 'directory') {
        const info = await lstat(target).catch(() => null);
        if (info && !info.isDirectory()) throw new UnsafeReleaseError(`release entry ${JSON.stringify(name)} is a directory and something else`);
        if (!info) await mkdir(target, { mode: 0o755 });
        known.add(segments.join('/'));
      } else if (type === 'symlink' && linkname && !linkname.startsWith('/') && !linkname.includes('\0')) {
        await symlink(linkname, target).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'EEXIST' ? new UnsafeReleaseError(`release entry ${JSON.stringify(name)} appears twice`) : error;
        });
        links.push(segments);
      } else {
        throw new UnsafeReleaseError(
          `release entry not allowed: ${JSON.stringify(name)} (${type ?? 'unknown'}${type === 'symlink' ? ' to an absolute path' : ''})`,
        );
      }
    }
    await feeding;
    // Checked once the tree is complete: a link may point at an entry that comes later.
    for (const segments of links) {
      const resolved = await resolveLinkInTree(root, segments);
      if (resolved.kind !== 'inside')
        throw new UnsafeReleaseError(
          `release link ${JSON.stringify(segments.join('/'))} leads ${resolved.kind === 'loop' ? 'into a loop' : 'outside the release'}`,
        );
    }
    await rename(temp, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await feeding.catch(() => undefined);
    await rm(temp, { recursive: true, force: true });
  }
}
