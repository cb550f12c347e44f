import { lstat, mkdir, open, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { SOURCE_DIRECTORY_MODE, SOURCE_EXECUTABLE_MODE, SOURCE_FILE_MODE, isGzip } from '@slipway/blob';
import { CREATE_FILE, ensureParents, entrySegments, resolveLinkInTree } from '@slipway/runtime';
import tarStream from 'tar-stream';
import { StepFailure } from './step-recorder.js';

// eslint-disable-next-line no-control-regex -- targets with control characters are refused on purpose
const BAD_TARGET = /[\u0000-\u001f\u007f\\]/;

function segmentsOf(name: string): string[] {
  return entrySegments(name, () => new StepFailure('bad_source', `the source contains a path Slipway refuses: ${JSON.stringify(name)}`));
}

/** Parents made only as real directories (libs/runtime `ensureParents`): whatever the gateway let through, no write goes through a link. */
function parentsOf(root: string, segments: string[], name: string, known: Set<string>): Promise<void> {
  return ensureParents(root, segments, known, {
    mode: SOURCE_DIRECTORY_MODE,
    refuse: (parent, isLink) =>
      new StepFailure(
        'bad_source',
        `the source writes ${JSON.stringify(name)} below ${JSON.stringify(parent)}, which is ${isLink ? 'a symbolic link' : 'not a directory'}`,
      ),
  });
}

function twice(name: string): StepFailure {
  return new StepFailure('bad_source', `the source names ${JSON.stringify(name)} twice or as both file and directory`);
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
 * Extracts a source tar (gzip-compressed or not) (libs/blob source format) into `root`, which must
 * be a fresh empty directory. Treats the stored source as hostile, whatever the gateway checked:
 * refuses absolute or `..` paths, hard links, devices, FIFOs, duplicate names; writes nothing
 * through a link (every parent must be a directory this extraction made, every file is created
 * with `O_CREAT|O_EXCL|O_NOFOLLOW`); keeps symbolic links as links only when their target is
 * relative and, once everything is written, resolves inside `root` (a chain of several entries
 * included, no loop). Files get 0644 or 0755 only. On a refusal `root` may hold part of the
 * source: the caller's workspace is discarded with the failed build.
 */
export async function extractSource(source: Readable, root: string): Promise<{ files: number; links: number; bytes: number }> {
  const absoluteRoot = await realpath(root);
  const extract = tarStream.extract();
  const feeding = pipeline(source, tarBytes, extract);
  const known = new Set<string>();
  const links: string[][] = [];
  let files = 0;
  let bytes = 0;
  try {
    for await (const entry of extract) {
      const { name, type, mode, size, linkname } = entry.header;
      const segments = segmentsOf(name);
      await parentsOf(absoluteRoot, segments, name, known);
      const target = join(absoluteRoot, ...segments);
      if (type === 'file') {
        const fileMode = (mode ?? 0) & 0o111 ? SOURCE_EXECUTABLE_MODE : SOURCE_FILE_MODE;
        const handle = await open(target, CREATE_FILE, fileMode).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'EEXIST' || error.code === 'ELOOP' || error.code === 'EISDIR' ? twice(name) : error;
        });
        await pipeline(entry, handle.createWriteStream());
        files += 1;
        bytes += size ?? 0;
        continue;
      }
      entry.resume();
      if (type === 'directory') {
        const info = await lstat(target).catch(() => null);
        if (info && !info.isDirectory()) throw twice(name);
        if (!info) await mkdir(target, { mode: SOURCE_DIRECTORY_MODE });
        known.add(segments.join('/'));
      } else if (type === 'symlink') {
        if (!linkname || linkname.startsWith('/') || BAD_TARGET.test(linkname)) {
          throw new StepFailure(
            'bad_source',
            `the source contains a link ${JSON.stringify(name)} with a target Slipway refuses (${JSON.stringify(linkname ?? '')})`,
          );
        }
        await symlink(linkname, target).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'EEXIST' ? twice(name) : error;
        });
        links.push(segments);
      } else {
        throw new StepFailure(
          'bad_source',
          `the source contains a ${type ?? 'special'} entry (${JSON.stringify(name)}); only regular files, directories and symbolic links are allowed`,
        );
      }
    }
    await feeding;
  } catch (error) {
    source.destroy();
    await feeding.catch(() => undefined);
    if (error instanceof StepFailure) throw error;
    throw new StepFailure('bad_source', `the stored source is not a readable tar: ${(error as Error).message}`);
  }
  // Checked once the tree is complete: a link may name an entry that comes later.
  for (const segments of links) {
    const resolved = await resolveLinkInTree(absoluteRoot, segments).catch((error: NodeJS.ErrnoException) => {
      throw new StepFailure(
        'bad_source',
        `the source contains a link ${JSON.stringify(segments.join('/'))} that cannot be resolved (${error.code ?? error.message})`,
      );
    });
    if (resolved.kind !== 'inside') {
      throw new StepFailure(
        'bad_source',
        `the source contains a link ${JSON.stringify(segments.join('/'))} that ${resolved.kind === 'loop' ? 'is in a loop of links' : 'leads outside the project'}`,
      );
    }
  }
  return { files, links: links.length, bytes };
}

export const workspacePaths = (buildDir: string, deploymentId: string, attempt: number) => ({
  root: join(buildDir, 'workspaces', `${deploymentId}-${attempt}`),
});
