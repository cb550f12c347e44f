import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import type { SourceFile } from './source-files.js';

/** Called as file bytes enter the archive (so it follows the upload, thanks to backpressure). */
export type ProgressListener = (bytesRead: number) => void;

/**
 * A tar.gz of `files` (links as links), produced while it is read: one file open at a time and never the whole
 * archive in memory. mtime 0 and no owner, so the same folder gives the same bytes.
 */
export function sourceArchive(files: SourceFile[], onProgress: ProgressListener = () => {}): Readable {
  const pack = tar.pack();
  const gzip = createGzip();
  let read = 0;
  const fill = async () => {
    for (const file of files) {
      if (file.link !== undefined) {
        await new Promise<void>((resolve, reject) =>
          pack.entry({ name: file.path, type: 'symlink', linkname: file.link, mode: 0o777, mtime: new Date(0), uid: 0, gid: 0 }, (error) =>
            error ? reject(error) : resolve(),
          ),
        );
        continue;
      }
      await new Promise<void>((resolve, reject) => {
        const entry = pack.entry({ name: file.path, size: file.size, mode: file.mode, mtime: new Date(0), uid: 0, gid: 0, type: 'file' }, (error) =>
          error ? reject(error) : resolve(),
        );
        const content = createReadStream(file.absolute);
        content.on('data', (chunk) => {
          read += chunk.length;
          onProgress(read);
        });
        content.on('error', reject);
        content.pipe(entry as unknown as NodeJS.WritableStream);
      });
    }
    pack.finalize();
  };
  fill().catch((error: Error) => gzip.destroy(error));
  (pack as unknown as Readable).pipe(gzip);
  return gzip;
}

export interface MultipartUpload {
  contentType: string;
  body: Readable;
}

/**
 * `multipart/form-data` with one `archive` part, streamed from `archive` as it is read, after
 * the text `fields` (`rootDirectory`): first, so the platform refuses a bad value before the
 * archive is sent. Their names and values are the caller's, already checked.
 */
export function multipartArchive(
  archive: Readable,
  onSent: (bytes: number) => void = () => {},
  fields: Record<string, string> = {},
  filename = 'source.tar.gz',
): MultipartUpload {
  const boundary = `----slipway-${randomBytes(12).toString('hex')}`;
  async function* parts(): AsyncGenerator<Buffer> {
    for (const [name, value] of Object.entries(fields))
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="${filename}"\r\nContent-Type: application/gzip\r\n\r\n`);
    for await (const chunk of archive) {
      onSent((chunk as Buffer).length);
      yield chunk as Buffer;
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Readable.from(parts(), { objectMode: false }) };
}
