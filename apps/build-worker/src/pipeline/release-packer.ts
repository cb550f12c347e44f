import { constants } from 'node:fs';
import { open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, createGzip, gzip } from 'node:zlib';
import type { BlobStore, StoredBlob } from '@slipway/blob';
import { PRECOMPRESSED_DIR, isPrecompressible } from '@slipway/contract';
import tarStream from 'tar-stream';
import { isBuildCache } from './build-caches.js';
import { checkOutputLink, type LinkCheck } from './output-links.js';
import { StepFailure } from './step-recorder.js';

/** Never part of a release, whatever the build produced: the edge must never serve them. */
export function excludedFromRelease(path: string): boolean {
  return /(^|\/)\.git(\/|$)/.test(path) || /^\.env($|\.)/.test(path.slice(path.lastIndexOf('/') + 1));
}

interface Packable {
  path: string;
  abs: string;
  link?: string;
}

/** Every entry under `root` in name order, links not followed (they are entries of their own). */
async function* walk(root: string, skip: (path: string) => boolean, prefix = ''): AsyncGenerator<Packable> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    const abs = join(root, path);
    if (excludedFromRelease(path) || skip(path)) continue;
    if (entry.isDirectory()) yield* walk(root, skip, path);
    else if (entry.isFile()) yield { path, abs };
    else if (entry.isSymbolicLink()) yield { path, abs, link: await readlink(abs) };
  }
}

/**
 * Opens the file at `path` under `root` (a real path) for packing: `O_NOFOLLOW` for the last
 * component, and on Linux the path the kernel really opened (`/proc/self/fd/N`) must be the one
 * walked (`shown`: the path for the message, relative to the project), so a directory swapped for a link after the walk (a build process still running
 * without the sandbox) is caught too. `null` when it is no longer a regular file.
 */
export async function openRegular(root: string, path: string, shown = path): Promise<{ handle: FileHandle; mode: number; size: number } | null> {
  const abs = join(root, path);
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (process.platform === 'linux' && (await readlink(`/proc/self/fd/${handle.fd}`)) !== abs) {
      throw new StepFailure(
        'unsafe_output',
        `the build output changed while it was packed: ${shown} no longer leads to the file that was listed; nothing was packed`,
      );
    }
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return { handle, mode: info.mode & 0o111 ? 0o755 : 0o644, size: info.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Files up to this size are read whole and packed as one entry (larger ones are streamed). */
const WHOLE_READ_BYTES = 4 * 1024 * 1024;
const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
/** Brotli's best quality costs ~1.5 s per MiB here: files above this get quality 9 (~15x faster, ~10% larger). */
const BROTLI_MAX_QUALITY_BYTES = 1024 * 1024;

/** The whole file (it is small enough to precompress), read from the already opened, checked handle. */
async function readAll(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/**
 * The file's brotli and gzip forms, each only when it is smaller than the file. Compressed on
 * zlib's thread pool, once per release, so the edge never compresses while it serves.
 */
async function precompressed(body: Buffer): Promise<{ suffix: string; data: Buffer }[]> {
  const quality = body.length <= BROTLI_MAX_QUALITY_BYTES ? zlibConstants.BROTLI_MAX_QUALITY : 9;
  const [br, gz] = await Promise.all([
    brotliAsync(body, {
      params: {
        [zlibConstants.BROTLI_PARAM_QUALITY]: quality,
        [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
        [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipAsync(body, { level: 9 }),
  ]);
  return [
    { suffix: '.br', data: br },
    { suffix: '.gz', data: gz },
  ].filter((c) => c.data.length < body.length);
}

/**
 * Packs `dir` into an immutable `releases/<releaseId>.tar.gz` blob. Regular files are read with
 * `O_NOFOLLOW`; links are packed as links, unchanged, only when they lead somewhere inside `dir`
 * all the way (`checkOutputLink`); any other link fails with `unsafe_output` and nothing is
 * stored. `options.project` (default `dir`) is the project holding `dir`, for messages.
 * `options.precompress` (static releases): each compressible regular file also gets
 * `PRECOMPRESSED_DIR/<path>.br` and `.gz` (libs/contract), compressed from the same checked,
 * no-follow read that is packed; links get none (the edge uses their target's). A directory of
 * that name in the output is never packed. `options.level`: gzip's level (6 unless said).
 */
export async function packRelease(
  blobs: BlobStore,
  key: string,
  dir: string,
  options: { skipNodeModules?: boolean; project?: string; precompress?: boolean; skipBuildCaches?: boolean; level?: number } = {},
): Promise<StoredBlob & { files: number; precompressed: number }> {
  const root = await realpath(dir);
  const check: LinkCheck = { dir: root, project: await realpath(options.project ?? dir) };
  if (root !== check.project && !root.startsWith(check.project + sep))
    throw new StepFailure('unsafe_output', 'the build output leads outside the project; nothing was packed');
  const skip = (path: string) =>
    (Boolean(options.skipNodeModules) && path === 'node_modules') ||
    (Boolean(options.skipBuildCaches) && isBuildCache(path)) ||
    (Boolean(options.precompress) && path.split('/').includes(PRECOMPRESSED_DIR));
  const pack = tarStream.pack();
  const body = new PassThrough();
  let files = 0;
  let compressed = 0;
  const producing = (async () => {
    for await (const file of walk(root, skip)) {
      if (file.link !== undefined) {
        await checkOutputLink(check, file.path.split('/'));
        pack.entry({ name: file.path, type: 'symlink', linkname: file.link, mode: 0o777, mtime: new Date(0) });
        continue;
      }
      const opened = await openRegular(root, file.path, relative(check.project, file.abs));
      if (!opened) continue;
      files += 1;
      const compressible = Boolean(options.precompress) && isPrecompressible(file.path, opened.size);
      if (!compressible && opened.size > WHOLE_READ_BYTES) {
        const entry = pack.entry({ name: file.path, size: opened.size, mode: opened.mode, mtime: new Date(0) });
        await pipeline(opened.handle.createReadStream(), entry);
        continue;
      }
      // One read and one entry (a stream per file costs more than the file for most of a release);
      // the same bytes are what gets precompressed.
      const body = await readAll(opened.handle, opened.size).finally(() => opened.handle.close());
      await addEntry(pack, { name: file.path, mode: opened.mode }, body);
      if (!compressible) continue;
      for (const form of await precompressed(body)) {
        await addEntry(pack, { name: `${PRECOMPRESSED_DIR}/${file.path}${form.suffix}`, mode: 0o644 }, form.data);
        compressed += 1;
      }
    }
    pack.finalize();
  })().catch((error: unknown) => {
    // Nothing of a refused output is stored: the blob write fails with the same error.
    body.destroy(error as Error);
    pack.destroy();
    throw error;
  });
  const compressing = pipeline(pack, createGzip({ level: options.level ?? 6 }), body);
  const [stored] = await Promise.all([blobs.put(key, body), producing, compressing]);
  return { ...stored, files, precompressed: compressed };
}

function addEntry(pack: tarStream.Pack, header: { name: string; mode: number }, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ ...header, size: body.length, mtime: new Date(0) }, body, (error) => (error ? reject(error) : resolve()));
  });
}
