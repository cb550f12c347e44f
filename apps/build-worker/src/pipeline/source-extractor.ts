import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SOURCE_DIRECTORY_MODE, SOURCE_EXECUTABLE_MODE, SOURCE_FILE_MODE } from '@slipway/blob';
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
 * Extracts a source tar (libs/blob source format) into `root`, which must be a fresh empty
 * directory. Refuses anything outside the format: absolute or `..` paths, links, devices, FIFOs,
 * duplicate names. Files get 0644 or 0755 only.
 */
export async function extractSource(source: Readable, root: string): Promise<{ files: number; bytes: number }> {
  const absoluteRoot = resolve(root);
  const extract = tarStream.extract();
  const feeding = pipeline(source, extract);
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
