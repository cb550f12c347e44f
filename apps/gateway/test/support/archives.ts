import { createGunzip, deflateRawSync, gzipSync } from 'node:zlib';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

export interface TarEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo' | 'character-device';
  content?: Buffer | string;
  mode?: number;
  linkname?: string;
}

/** A tar built in memory with tar-stream: any name, type or link the test needs. */
export async function makeTar(entries: TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = pipeline(pack as unknown as NodeJS.ReadableStream, new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) }));
  for (const entry of entries) {
    const content = entry.content === undefined ? Buffer.alloc(0) : Buffer.from(entry.content);
    const type = entry.type ?? 'file';
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        {
          name: entry.name,
          type,
          mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
          linkname: entry.linkname,
          size: type === 'file' ? content.length : 0,
        },
        type === 'file' ? content : undefined,
        (e) => (e ? reject(e) : resolve()),
      ),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export async function makeTarGz(entries: TarEntry[]): Promise<Buffer> {
  return gzipSync(await makeTar(entries));
}

export interface ZipEntry {
  name: string;
  content?: Buffer | string;
  /** Unix mode including type bits, e.g. 0o120777 for a symlink. */
  unixMode?: number;
  deflate?: boolean;
}

/** A zip written byte by byte (no library would write a zip-slip name on purpose). */
export function makeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const raw = Buffer.from(entry.content ?? '');
    const data = entry.deflate ? deflateRawSync(raw) : raw;
    const crc = crc32(raw);
    const method = entry.deflate ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.unixMode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export interface StoredEntry {
  mode: number;
  type: string;
  content: string;
  /** A symbolic link's target. */
  linkname?: string;
}

/** Lists a stored source (a gzip-compressed tar, libs/blob source format): name → {mode, type, content, linkname}. */
export async function readTar(stream: Readable): Promise<Map<string, StoredEntry>> {
  const extract = tar.extract();
  stream.pipe(createGunzip()).pipe(extract as unknown as NodeJS.WritableStream);
  const entries = new Map<string, StoredEntry>();
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const stored: StoredEntry = { mode: entry.header.mode!, type: entry.header.type!, content: Buffer.concat(chunks).toString('utf8') };
    if (entry.header.type === 'symlink') stored.linkname = entry.header.linkname ?? '';
    entries.set(entry.header.name, stored);
  }
  return entries;
}
