import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { ArchiveEntryPaths, entryRefusal, printable, refuseEntry } from './archive-entries.js';
import type { SourceTarWriter } from './source-tar-writer.js';

export type ArchiveKind = 'zip' | 'tar' | 'tar.gz';

/** Recognises an archive by its first bytes (never by its name). */
export async function detectArchiveKind(path: string): Promise<ArchiveKind | null> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await handle.read(head, 0, 512, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
    if (bytesRead === 512 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
    return null;
  } finally {
    await handle.close();
  }
}

/** Streams a tar or tar.gz spool file, entry by entry, into the writer. */
export async function readTarArchive(path: string, gzipped: boolean, writer: SourceTarWriter, limits: UploadLimits): Promise<void> {
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
  const extract = tar.extract({ allowUnknownFormat: false });
  const stages: (NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream)[] = [createReadStream(path)];
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
        case 'symlink':
          throw entryRefusal(header.name, 'a symbolic link');
        case 'link':
          throw entryRefusal(header.name, 'a hard link');
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
      yauzl.open(path, { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true, decodeStrings: true }, (error, file) => (error ? reject(error) : resolve(file))),
    );
  } catch (error) {
    throw asArchiveError(error);
  }
  try {
    if (zip.entryCount > limits.maxFiles * 2) throw new ApiException('too_large', `The archive has more than ${limits.maxFiles} entries.`);
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      const madeByUnix = entry.versionMadeBy >> 8 === 3;
      const unixMode = madeByUnix ? entry.externalFileAttributes >>> 16 : 0;
      const type = unixMode & S_IFMT;
      if (entry.fileName.endsWith('/') || type === S_IFDIR) {
        names.directory(entry.fileName);
        continue;
      }
      if (type === S_IFLNK) refuseEntry(entry.fileName, 'a symbolic link');
      if (type !== 0 && type !== S_IFREG) refuseEntry(entry.fileName, 'a device, FIFO or socket');
      if (entry.isEncrypted()) refuseEntry(entry.fileName, 'encrypted');
      const filePath = names.file(entry.fileName);
      const content = await openEntry(zip, entry);
      await writer.addFile(filePath, entry.uncompressedSize, madeByUnix ? unixMode : undefined, content);
    }
  } catch (error) {
    throw error instanceof ApiException ? error : asArchiveError(error);
  } finally {
    zip.close();
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
    const what = unsafe[1] === 'invalid relative path' ? 'escapes the root' : unsafe[1] === 'absolute path' ? 'is absolute' : 'contains a backslash or a control character';
    return new ApiException('bad_archive', `The archive entry "${printable(unsafe[2]!)}" ${what}.`);
  }
  const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new ApiException('bad_archive', `The archive is corrupt or unsupported (${detail}).`);
}
