import { createReadStream } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { BlobStore, StoredBlob } from '@slipway/blob';
import tarStream from 'tar-stream';

/** Never part of a release, whatever the build produced: the edge must never serve them. */
export function excludedFromRelease(path: string): boolean {
  return /(^|\/)\.git(\/|$)/.test(path) || /^\.env($|\.)/.test(path.slice(path.lastIndexOf('/') + 1));
}

async function* walk(root: string, skip: (path: string) => boolean, prefix = ''): AsyncGenerator<{ path: string; abs: string; mode: number; size: number; link?: string }> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    const abs = join(root, path);
    if (excludedFromRelease(path) || skip(path)) continue;
    if (entry.isDirectory()) yield* walk(root, skip, path);
    else if (entry.isFile()) {
      const info = await stat(abs);
      yield { path, abs, mode: info.mode & 0o111 ? 0o755 : 0o644, size: info.size };
    } else if (entry.isSymbolicLink()) {
      // node_modules/.bin links; kept as links, the edge extracts them inside the release only.
      yield { path, abs, mode: 0o777, size: 0, link: await readlink(abs) };
    }
  }
}

/** Packs `dir` into an immutable `releases/<releaseId>.tar.gz` blob. */
export async function packRelease(blobs: BlobStore, key: string, dir: string, options: { skipNodeModules?: boolean } = {}): Promise<StoredBlob & { files: number }> {
  const skip = (path: string) => Boolean(options.skipNodeModules) && path === 'node_modules';
  const pack = tarStream.pack();
  const body = new PassThrough();
  let files = 0;
  const producing = (async () => {
    for await (const file of walk(dir, skip)) {
      if (file.link !== undefined) {
        pack.entry({ name: file.path, type: 'symlink', linkname: file.link, mode: 0o777, mtime: new Date(0) });
        continue;
      }
      const entry = pack.entry({ name: file.path, size: file.size, mode: file.mode, mtime: new Date(0) });
      await pipeline(createReadStream(file.abs), entry);
      files += 1;
    }
    pack.finalize();
  })();
  const compressing = pipeline(pack, createGzip({ level: 6 }), body);
  const [stored] = await Promise.all([blobs.put(key, body), producing, compressing]);
  return { ...stored, files };
}
