import { constants, createGzip, gzipSync } from 'node:zlib';
import { crc32 } from 'node:zlib';

const KiB = 1024;

/** Tar record types that carry metadata for the next entry (and that a reader must buffer). */
export type LongHeaderType = 'x' | 'g' | 'L' | 'K';
export const LONG_HEADER_TYPES: LongHeaderType[] = ['x', 'g', 'L', 'K'];

/**
 * One 512-byte tar header block, encoded by hand so it can declare anything: sizes beyond the
 * octal field are written in GNU base-256 (as real tars do for files over 8 GiB).
 */
export function tarHeader(options: { name: string; type: string; size: number; gnu?: boolean }): Buffer {
  const block = Buffer.alloc(512);
  block.write(options.name.slice(0, 100), 0, 'utf8');
  block.write('0000644\0', 100, 'latin1');
  block.write('0000000\0', 108, 'latin1');
  block.write('0000000\0', 116, 'latin1');
  if (options.size < 8 ** 11) {
    block.write(`${options.size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  } else {
    block[124] = 0x80;
    let rest = BigInt(options.size);
    for (let i = 135; i > 124; i--, rest >>= 8n) block[i] = Number(rest & 0xffn);
  }
  block.write('00000000000\0', 136, 'latin1');
  block.write(options.type, 156, 'latin1');
  if (options.gnu) block.write('ustar  \0', 257, 'latin1');
  else block.write('ustar\u000000', 257, 'latin1');
  block.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

/** `block` with its 12-byte size field replaced by `field` (anything) and its checksum redone. */
export function withSizeField(block: Buffer, field: Buffer): Buffer {
  const copy = Buffer.from(block);
  field.copy(copy, 124, 0, 12);
  copy.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of copy) sum += byte;
  copy.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return copy;
}

/** A PAX record `"<len> key=value\n"` of exactly `bytes` bytes (bytes >= 16). */
export function paxRecord(key: string, bytes: number): Buffer {
  for (let digits = 1; digits < 10; digits++) {
    const valueLength = bytes - digits - 1 - key.length - 2;
    const record = `${bytes} ${key}=${'v'.repeat(valueLength)}\n`;
    if (Buffer.byteLength(record) === bytes) return Buffer.from(record);
  }
  throw new Error(`no PAX record of ${bytes} bytes`);
}

const pad = (bytes: number) => Buffer.alloc((512 - (bytes % 512)) % 512);

/** A well-formed tar whose one file is preceded by a long header of `bytes` bytes (a legitimate use). */
export function tarWithLongHeader(type: LongHeaderType, bytes: number, file = { name: 'index.html', content: Buffer.from('<h1>ok</h1>') }): Buffer {
  const body = type === 'x' || type === 'g' ? paxRecord('comment', bytes) : Buffer.concat([Buffer.from(file.name), Buffer.alloc(bytes - file.name.length)]);
  const gnu = type === 'L' || type === 'K';
  return Buffer.concat([
    tarHeader({ name: type === 'g' ? 'pax_global_header' : '././@LongLink', type, size: body.length, gnu }),
    body,
    pad(body.length),
    tarHeader({ name: file.name, type: '0', size: file.content.length, gnu }),
    file.content,
    pad(file.content.length),
    Buffer.alloc(1024),
  ]);
}

/**
 * The attacker's upload: a long header declaring `declared` bytes, followed by up to `offered`
 * bytes of its "body", produced lazily (only as fast as the gateway reads). `gzip`: the stream
 * is gzipped on the fly, so a few KiB on the wire claim and carry megabytes.
 */
export async function* hostileLongHeader(
  type: LongHeaderType,
  declared: number,
  offered: number,
  gzip: boolean,
  produced: { bytes: number } = { bytes: 0 },
): AsyncGenerator<Buffer> {
  const header = tarHeader({ name: type === 'g' ? 'pax_global_header' : '././@LongLink', type, size: declared, gnu: type === 'L' || type === 'K' });
  async function* raw(): AsyncGenerator<Buffer> {
    yield header;
    const filler = Buffer.alloc(64 * KiB, type === 'x' || type === 'g' ? 0x31 : 0x61);
    for (let sent = 0; sent < offered; sent += filler.length) {
      produced.bytes += filler.length;
      yield filler.subarray(0, Math.min(filler.length, offered - sent));
    }
  }
  if (!gzip) return yield* raw();
  const z = createGzip();
  const feed = (async () => {
    for await (const chunk of raw()) {
      if (z.destroyed) break;
      if (!z.write(chunk)) await new Promise((resolve) => (z.once('drain', resolve), z.once('close', resolve)));
    }
    z.end();
  })();
  try {
    for await (const chunk of z) yield chunk as Buffer;
  } finally {
    z.destroy();
    await feed.catch(() => undefined);
  }
}

/** Only the 512-byte header block of a hostile long header (gzipped and flushed, or raw): nothing of its body. */
export function longHeaderBlockOnly(type: LongHeaderType, declared: number, gzip: boolean): Buffer {
  const header = tarHeader({ name: '././@LongLink', type, size: declared, gnu: type === 'L' || type === 'K' });
  return gzip ? gzipSync(header, { finishFlush: constants.Z_SYNC_FLUSH }) : header;
}

/**
 * A stored zip of one file whose central-directory record carries `extraBytes` of extra field
 * (one unknown field, id 0xcafe) and `commentBytes` of entry comment, and whose archive comment
 * has `archiveCommentBytes` (at most 65535: the format's own bound).
 */
export function zipWithMetadata(options: { extraBytes?: number; commentBytes?: number; archiveCommentBytes?: number }): Buffer {
  const name = Buffer.from('index.html');
  const content = Buffer.from('<h1>zip</h1>');
  const crc = crc32(content);
  const extra = options.extraBytes ? Buffer.alloc(options.extraBytes, 0x20) : Buffer.alloc(0);
  if (extra.length) {
    extra.writeUInt16LE(0xcafe, 0);
    extra.writeUInt16LE(extra.length - 4, 2);
  }
  const comment = Buffer.alloc(options.commentBytes ?? 0, 0x63);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0800, 6);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(content.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE((3 << 8) | 20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(content.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt16LE(extra.length, 30);
  central.writeUInt16LE(comment.length, 32);
  central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
  const centralRecord = Buffer.concat([central, name, extra, comment]);
  const localRecord = Buffer.concat([local, name, content]);
  const archiveComment = Buffer.alloc(options.archiveCommentBytes ?? 0, 0x2e);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(centralRecord.length, 12);
  end.writeUInt32LE(localRecord.length, 16);
  end.writeUInt16LE(archiveComment.length, 20);
  return Buffer.concat([localRecord, centralRecord, end, archiveComment]);
}
