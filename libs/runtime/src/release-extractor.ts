import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import tarStream from 'tar-stream';

function inside(root: string, target: string): boolean {
  return target === root || target.startsWith(root + sep);
}

/**
 * Extracts a release artifact (`.tar.gz`) into `dir` once: into a temporary sibling, then
 * renamed, so a directory that exists is always complete. Entries and link targets must stay
 * inside the release.
 */
export async function extractRelease(artifact: Readable, dir: string): Promise<void> {
  if (await stat(dir).catch(() => null)) return;
  const temp = `${dir}.part-${randomBytes(4).toString('hex')}`;
  const root = resolve(temp);
  await mkdir(root, { recursive: true });
  const extract = tarStream.extract();
  const feeding = pipeline(artifact, createGunzip(), extract);
  try {
    for await (const entry of extract) {
      const { name, type, linkname, mode } = entry.header;
      const target = resolve(root, name);
      if (!inside(root, target) || target === root) throw new Error(`release entry outside the release: ${name}`);
      await mkdir(dirname(target), { recursive: true });
      if (type === 'file') {
        await pipeline(entry, createWriteStream(target, { mode: (mode ?? 0o644) & 0o755 }));
        continue;
      }
      entry.resume();
      if (type === 'directory') await mkdir(target, { recursive: true });
      else if (type === 'symlink' && linkname && inside(root, resolve(dirname(target), linkname))) await symlink(linkname, target);
      else throw new Error(`release entry not allowed: ${name} (${type})`);
    }
    await feeding;
    await rename(temp, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await feeding.catch(() => undefined);
    await rm(temp, { recursive: true, force: true });
  }
}
