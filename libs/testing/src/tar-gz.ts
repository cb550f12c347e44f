import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tarStream from 'tar-stream';

/** One file of an archive a test builds: its bytes, or `size` bytes repeated from `fill` (never held whole). */
export type ArchiveFile = { name: string; content: Buffer } | { name: string; size: number; fill: Buffer };

/**
 * A tar.gz of `files`, built in memory as a tenant's client would send it (gzip level 9). Large
 * files are written in `fill`-sized pieces, so an archive that unpacks to hundreds of MiB costs
 * only its compressed size in memory.
 */
export async function tarGzOf(files: ArchiveFile[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = pipeline(pack, createGzip({ level: 9 }), sink);
  for (const file of files) {
    if ('content' in file) {
      pack.entry({ name: file.name, mtime: new Date(0) }, file.content);
      continue;
    }
    const entry = pack.entry({ name: file.name, size: file.size, mtime: new Date(0) }) as unknown as NodeJS.WritableStream;
    for (let written = 0; written < file.size; written += file.fill.length) {
      const piece = file.fill.subarray(0, Math.min(file.fill.length, file.size - written));
      if (!entry.write(piece)) await new Promise<void>((resolve) => entry.once('drain', () => resolve()));
    }
    entry.end();
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}
