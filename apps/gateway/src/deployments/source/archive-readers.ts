import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { ArchiveEntryPaths, entryRefusal, printable, refuseEntry } from './archive-entries.js';
import type { SourceTarWriter } from './source-tar-writer.js';
import { boundLongHeaders } from './tar-long-headers.js';

export type ArchiveKind = 'zip' | 'tar' | 'tar.gz';

/** Recognises an archive by its first bytes (never by its name). */
export function archiveKindOf(head: Buffer): ArchiveKind | null {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (head.length >= 512 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  return null;
}

const SNIFF_BYTES = 512;

/** gzip and zip are known from their first bytes; only tar needs its whole first block. */
function decided(head: Buffer[], size: number): boolean {
  if (size >= SNIFF_BYTES) return true;
  const first = Buffer.concat(head, size);
  return (size >= 2 && first[0] === 0x1f && first[1] === 0x8b) || (size >= 4 && archiveKindOf(first) === 'zip');
}

/**
 * Reads the first bytes of a part as they arrive — up to 512, fewer once a gzip or zip magic
 * number decides (a gzip's first 512 bytes may decompress to megabytes, and a client must not
 * have to send them before its archive is looked at) — recognises the archive, and hands back a
 * stream that still yields every byte from the first one.
 */
export async function sniffArchive(part: Readable): Promise<{ kind: ArchiveKind | null; stream: Readable }> {
  const chunks = part[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (!decided(head, size)) {
    const next = await chunks.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    size += next.value.length;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* head;
    if (ended) return;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  return { kind: archiveKindOf(Buffer.concat(head, size)), stream: Readable.from(all(), { objectMode: false }) };
}

/**
 * Streams a tar or tar.gz, entry by entry as its bytes arrive, into the writer. Resolves with
 * the number of bytes the archive decompressed to (padding and skipped bytes included) once
 * the source has ended.
 */
export async function readTarArchive(source: Readable, gzipped: boolean, writer: SourceTarWriter, limits: UploadLimits): Promise<number> {
  const names = new ArchiveEntryPaths(limits);
  let decompressed = 0;
  // Counts every decompressed byte, including padding and bytes a parser would skip, so a
  // bomb that is not even a valid tar is still stopped.
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decompressed += chunk.length;
      try {
        writer.assertDecompressed(decompressed);
      } catch (error) {
        return callback(error as Error);
      }
      callback(null, chunk);
    },
  });
  // Extended headers and GNU long names are buffered whole by tar-stream: bounded, refused early.
  const extract = boundLongHeaders(tar.extract({ allowUnknownFormat: false }), limits.maxArchiveHeaderBytes);
  const stages: (NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream)[] = [source];
  if (gzipped) stages.push(createGunzip());
  stages.push(meter, extract as unknown as NodeJS.WritableStream);
  // The pipeline owns every stream's errors (a corrupt gzip must not become an unhandled event).
  const feeding = pipeline(stages);
  const fed = feeding.then(
    () => null,
    (error: unknown) => error as Error,
  );
  const entries = extract[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await Promise.race([entries.next(), fed.then((error) => (error ? Promise.reject(error) : new Promise<never>(() => undefined)))]);
      if (next.done) break;
      const entry = next.value;
      const { header } = entry;
      switch (header.type) {
        case 'file':
        case 'contiguous-file':
          await writer.addFile(names.file(header.name), header.size ?? 0, header.mode ?? undefined, entry as unknown as Readable);
          break;
        case 'directory':
          names.directory(header.name);
          entry.resume();
          break;
        case 'symlink': {
          const link = names.link(header.name, header.linkname ?? '');
          entry.resume();
          await writer.addLink(link.path, link.target);
          break;
        }
        case 'link':
          throw entryRefusal(header.name, 'a hard link (replace it with a copy or a relative symbolic link)');
        case 'character-device':
        case 'block-device':
          throw entryRefusal(header.name, 'a device');
        case 'fifo':
          throw entryRefusal(header.name, 'a FIFO');
        default:
          throw entryRefusal(header.name, `of unsupported type ${String(header.type)}`);
      }
    }
    const error = await fed;
    if (error) throw error;
    names.checkLinks();
    return decompressed;
  } catch (error) {
    extract.destroy();
    meter.destroy();
    const fedError = await Promise.race([fed, Promise.resolve(null)]);
    throw error instanceof ApiException ? error : fedError instanceof ApiException ? fedError : asArchiveError(error);
  }
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** Reads a zip spool file (yauzl needs random access) entry by entry into the writer. */
export async function readZipArchive(path: string, writer: SourceTarWriter, limits: UploadLimits): Promise<void> {
  const names = new ArchiveEntryPaths(limits);
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(path, { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true, decodeStrings: true }, (error, file) =>
        error ? reject(error) : resolve(file),
      ),
    );
  } catch (error) {
    throw asArchiveError(error);
  }
  try {
    if (zip.entryCount > limits.maxFiles * 2) throw new ApiException('too_large', `The archive has more than ${limits.maxFiles} entries.`);
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      // yauzl has read this record (its lengths are 16-bit, so at most ~192 KiB, one record at
      // a time); a source has no use for that much metadata per entry.
      const metadata = entry.fileNameLength + entry.extraFieldLength + entry.fileCommentLength;
      if (metadata > limits.maxArchiveHeaderBytes) {
        throw new ApiException(
          'too_large',
          `The archive entry "${printable(entry.fileName)}" carries ${metadata} bytes of name, extra field and comment; at most ${limits.maxArchiveHeaderBytes} are accepted.`,
        );
      }
      const madeByUnix = entry.versionMadeBy >> 8 === 3;
      const unixMode = madeByUnix ? entry.externalFileAttributes >>> 16 : 0;
      const type = unixMode & S_IFMT;
      if (entry.fileName.endsWith('/') || type === S_IFDIR) {
        names.directory(entry.fileName);
        continue;
      }
      if (type !== 0 && type !== S_IFREG && type !== S_IFLNK) refuseEntry(entry.fileName, 'a device, FIFO or socket');
      if (entry.isEncrypted()) refuseEntry(entry.fileName, 'encrypted');
      if (type === S_IFLNK) {
        const link = names.link(entry.fileName, await linkTarget(zip, entry, limits));
        await writer.addLink(link.path, link.target);
        continue;
      }
      const filePath = names.file(entry.fileName);
      const content = await openEntry(zip, entry);
      await writer.addFile(filePath, entry.uncompressedSize, madeByUnix ? unixMode : undefined, content);
    }
    names.checkLinks();
  } catch (error) {
    throw error instanceof ApiException ? error : asArchiveError(error);
  } finally {
    zip.close();
  }
}

/**
 * A zip stores a link's target as the entry's content (Info-ZIP's convention, with the unix
 * mode's S_IFLNK). Read whole, at most `maxPathBytes`, and it must be UTF-8.
 */
async function linkTarget(zip: yauzl.ZipFile, entry: yauzl.Entry, limits: UploadLimits): Promise<string> {
  if (entry.uncompressedSize > limits.maxPathBytes) {
    throw new ApiException(
      'bad_archive',
      `The archive entry "${printable(entry.fileName)}" is a symbolic link whose target is longer than ${limits.maxPathBytes} bytes.`,
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk as Buffer);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ApiException('bad_archive', `The archive entry "${printable(entry.fileName)}" is a symbolic link whose target is not UTF-8.`);
  }
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => (cleanup(), resolve(entry));
    const onEnd = () => (cleanup(), resolve(null));
    const onError = (error: Error) => (cleanup(), reject(error));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(asArchiveError(error)) : resolve(stream))));
}

function asArchiveError(error: unknown): ApiException {
  if (error instanceof ApiException) return error;
  const message = error instanceof Error ? error.message : '';
  // yauzl refuses unsafe names itself (strictFileNames); say so in the same words as for tar.
  const unsafe = /^(invalid relative path|absolute path|invalid characters in fileName): (.*)$/s.exec(message);
  if (unsafe) {
    const what =
      unsafe[1] === 'invalid relative path'
        ? 'escapes the root'
        : unsafe[1] === 'absolute path'
          ? 'is absolute'
          : 'contains a backslash or a control character';
    return new ApiException('bad_archive', `The archive entry "${printable(unsafe[2]!)}" ${what}.`);
  }
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new ApiException('bad_archive', `The archive is corrupt or unsupported (${detail}).`);
}
