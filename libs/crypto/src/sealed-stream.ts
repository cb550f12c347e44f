import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Streams sealed at rest (backups): AES-256-GCM in chunks, under a key of their own derived with
 * HKDF-SHA256 from the master key, a random salt and the stream's binding (`base:<id>`,
 * `wal:<segment>`, …), so that a file renamed to another backup's name does not open.
 *
 * Layout (version 1):
 *   header  [8 "SLIPSEAL"][1 version][16 salt][4 chunk size]
 *   chunks  [4 plaintext length][ciphertext][16 tag] …
 * Each chunk's nonce is its index (8 bytes) and a last-chunk flag (4 bytes); the header is every
 * chunk's associated data. A stream that was cut, reordered, spliced or altered anywhere fails to
 * open, and a stream without its last chunk is reported as cut.
 */
const MAGIC = Buffer.from('SLIPSEAL', 'ascii');
const VERSION = 1;
const SALT = 16;
const TAG = 16;
const HEADER = MAGIC.length + 1 + SALT + 4;
const DEFAULT_CHUNK = 1 << 20;
const MAX_CHUNK = 16 << 20;

export class SealError extends Error {
  override readonly name = 'SealError';
}

function streamKey(masterKeyBase64: string, salt: Buffer, binding: string): Buffer {
  const master = Buffer.from(masterKeyBase64, 'base64');
  if (master.length !== 32) throw new SealError('master key must be 32 bytes');
  return Buffer.from(hkdfSync('sha256', master, salt, `slipway sealed stream v1:${binding}`, 32));
}

function nonce(index: number, last: boolean): Buffer {
  const value = Buffer.alloc(12);
  value.writeBigUInt64BE(BigInt(index), 0);
  value.writeUInt32BE(last ? 1 : 0, 8);
  return value;
}

/** Encrypts what is written to it; the output starts with the header and ends with the last chunk. */
export function sealStream(masterKeyBase64: string, binding: string, chunkSize = DEFAULT_CHUNK): Transform {
  const salt = randomBytes(SALT);
  const key = streamKey(masterKeyBase64, salt, binding);
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header, 0);
  header.writeUInt8(VERSION, MAGIC.length);
  salt.copy(header, MAGIC.length + 1);
  header.writeUInt32BE(chunkSize, MAGIC.length + 1 + SALT);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let index = 0;
  let started = false;
  const sealChunk = (plain: Buffer, last: boolean): Buffer => {
    const cipher = createCipheriv('aes-256-gcm', key, nonce(index++, last));
    cipher.setAAD(header);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(plain.length);
    return Buffer.concat([length, body, cipher.getAuthTag()]);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (!started) {
        this.push(header);
        started = true;
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      // Hold back at least one byte: the last chunk is only known at the end.
      while (pendingBytes > chunkSize) {
        const all = Buffer.concat(pending);
        this.push(sealChunk(all.subarray(0, chunkSize), false));
        pending = [all.subarray(chunkSize)];
        pendingBytes = pending[0]!.length;
      }
      callback();
    },
    flush(callback: TransformCallback) {
      if (!started) this.push(header);
      this.push(sealChunk(Buffer.concat(pending), true));
      callback();
    },
  });
}

/**
 * Decrypts a sealed stream; any damage (wrong key or binding, a flipped byte, a cut or spliced
 * stream) fails it with a SealError. What it emitted before the damage must be thrown away:
 * callers verify a whole stream before they act on it.
 */
export function unsealStream(masterKeyBase64: string, binding: string): Transform {
  let buffered: Buffer = Buffer.alloc(0);
  let header: Buffer | undefined;
  let key: Buffer | undefined;
  let chunkSize = 0;
  let index = 0;
  let ended = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      try {
        if (!header) {
          if (buffered.length < HEADER) return callback();
          header = buffered.subarray(0, HEADER);
          if (!header.subarray(0, MAGIC.length).equals(MAGIC)) throw new SealError('not a sealed Slipway backup (bad header)');
          if (header.readUInt8(MAGIC.length) !== VERSION) throw new SealError(`sealed with an unknown format version ${header.readUInt8(MAGIC.length)}`);
          chunkSize = header.readUInt32BE(MAGIC.length + 1 + SALT);
          if (chunkSize < 1 || chunkSize > MAX_CHUNK) throw new SealError('bad chunk size in the header');
          key = streamKey(masterKeyBase64, Buffer.from(header.subarray(MAGIC.length + 1, MAGIC.length + 1 + SALT)), binding);
          header = Buffer.from(header);
          buffered = buffered.subarray(HEADER);
        }
        while (buffered.length >= 4) {
          if (ended) throw new SealError('data after the last chunk');
          const length = buffered.readUInt32BE(0);
          if (length > chunkSize) throw new SealError(`chunk ${index} is longer than the chunk size`);
          if (buffered.length < 4 + length + TAG) break;
          const body = buffered.subarray(4, 4 + length);
          const tag = buffered.subarray(4 + length, 4 + length + TAG);
          // A full chunk may be the last only when the plaintext is an exact multiple; try both.
          const plain =
            length < chunkSize
              ? open(key!, header, index, body, tag, true)
              : (open(key!, header, index, body, tag, false) ?? open(key!, header, index, body, tag, true));
          if (!plain) throw new SealError(`chunk ${index} does not authenticate (a damaged backup, or another master key)`);
          ended = plain.last;
          index++;
          buffered = buffered.subarray(4 + length + TAG);
          if (plain.data.length) this.push(plain.data);
        }
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      if (!header) return callback(new SealError('not a sealed Slipway backup (too short)'));
      if (buffered.length || !ended) return callback(new SealError('the backup is cut short (its last chunk is missing)'));
      callback();
    },
  });
}

function open(key: Buffer, header: Buffer, index: number, body: Buffer, tag: Buffer, last: boolean): { data: Buffer; last: boolean } | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce(index, last));
    decipher.setAAD(header);
    decipher.setAuthTag(tag);
    return { data: Buffer.concat([decipher.update(body), decipher.final()]), last };
  } catch {
    return undefined;
  }
}
