import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { SOURCE_DIRECTORY_MODE, SOURCE_EXECUTABLE_MODE, SOURCE_FILE_MODE, isGzip } from '@slipway/blob';
import tarStream from 'tar-stream';
import { StepFailure } from './step-recorder.js';

// eslint-disable-next-line no-control-regex -- names with control characters are refused on purpose
const SEGMENT = /^[^\u0000-\u001f\u007f/\\]+$/;

function checkedPath(root: string, name: string): string {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  const segments = trimmed.split('/');
  if (!trimmed || trimmed.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..' || !SEGMENT.test(s))) {
    throw new StepFailure('bad_source', `the source contains a path Slipway refuses: ${JSON.stringify(name)}`);
  }
  const target = resolve(root, ...segments);
  if (!target.startsWith(root + sep)) throw new StepFailure('bad_source', `the source contains a path outside the project: ${JSON.stringify(name)}`);
  return target;
}

/**
 * The stored source's tar bytes: gunzipped when the blob is gzip (every source the gateway stores
 * now), as they are otherwise (a `.tar` stored before sources were compressed and still queued).
 */
async function* tarBytes(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const chunks = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (head.length < 2) {
    const next = await chunks.next();
    if (next.done) {
      if (head.length > 0) yield head;
      return;
    }
    head = Buffer.concat([head, next.value]);
  }
  const rest = (async function* () {
    yield head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  })();
  if (!isGzip(head)) return yield* rest;
  const gunzip = createGunzip();
  const inflating = pipeline(Readable.from(rest), gunzip);
  inflating.catch(() => undefined);
  for await (const chunk of gunzip) yield chunk as Buffer;
  await inflating;
}

/**
 * Extracts a source tar (gzip-compressed or not) (libs/blob source format) into `root`, which must be a fresh empty
 * directory. Refuses anything outside the format: absolute or `..` paths, links, devices, FIFOs,
 * duplicate names. Files get 0644 or 0755 only.
 */
export async function extractSource(source: Readable, root: string): Promise<{ files: number; bytes: number }> {
  const absoluteRoot = resolve(root);
  const extract = tarStream.extract();
  const feeding = pipeline(source, tarBytes, extract);
  let files = 0;
  let bytes = 0;
  try {
    for await (const entry of extract) {
      const { name, type, mode, size } = entry.header;
      const target = checkedPath(absoluteRoot, name);
      if (type === 'directory') {
        await mkdir(target, { recursive: true, mode: SOURCE_DIRECTORY_MODE });
        entry.resume();
        continue;
      }
      if (type !== 'file') throw new StepFailure('bad_source', `the source contains a ${type ?? 'special'} entry (${JSON.stringify(name)}); only regular files are allowed`);
      await mkdir(dirname(target), { recursive: true, mode: SOURCE_DIRECTORY_MODE });
      const fileMode = (mode ?? 0) & 0o111 ? SOURCE_EXECUTABLE_MODE : SOURCE_FILE_MODE;
      // `wx`: a name that repeats (or collides with a directory) fails instead of overwriting.
      await pipeline(entry, createWriteStream(target, { flags: 'wx', mode: fileMode })).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'EEXIST' || error.code === 'EISDIR' || error.code === 'ENOTDIR'
          ? new StepFailure('bad_source', `the source names ${JSON.stringify(name)} twice or as both file and directory`)
          : error;
      });
      files += 1;
      bytes += size ?? 0;
    }
    await feeding;
  } catch (error) {
    source.destroy();
    await feeding.catch(() => undefined);
    if (error instanceof StepFailure) throw error;
    throw new StepFailure('bad_source', `the stored source is not a readable tar: ${(error as Error).message}`);
  }
  return { files, bytes };
}

export const workspacePaths = (buildDir: string, deploymentId: string, attempt: number) => ({
  root: join(buildDir, 'workspaces', `${deploymentId}-${attempt}`),
});
