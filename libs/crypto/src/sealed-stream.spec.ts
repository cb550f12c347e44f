import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SealError, sealStream, unsealStream } from './sealed-stream.js';

const key = randomBytes(32).toString('base64');

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function seal(plain: Buffer, binding = 'base:1', chunk = 1024): Promise<Buffer> {
  return collect(Readable.from([plain]).pipe(sealStream(key, binding, chunk)));
}

async function unseal(sealed: Buffer, binding = 'base:1', masterKey = key): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(
    Readable.from([sealed]),
    unsealStream(masterKey, binding),
    new Writable({
      write(part: Buffer, _encoding, callback) {
        parts.push(part);
        callback();
      },
    }),
  );
  return Buffer.concat(parts);
}

describe('sealed streams', () => {
  it.each([0, 1, 1023, 1024, 1025, 4096, 10_000])('round-trips %i bytes', async (size) => {
    const plain = randomBytes(size);
    const sealed = await seal(plain);
    // No 16 bytes of the plaintext appear in the sealed stream (shorter runs can by chance).
    if (size >= 16) expect(sealed.includes(plain.subarray(0, 16))).toBe(false);
    expect((await unseal(sealed)).equals(plain)).toBe(true);
  });

  it('refuses a flipped byte anywhere, another binding, another key, a cut and an appended stream', async () => {
    const plain = randomBytes(5000);
    const sealed = await seal(plain);
    for (const at of [0, 10, 30, 40, 1100, sealed.length - 1]) {
      const damaged = Buffer.from(sealed);
      damaged[at] = damaged[at]! ^ 0x40;
      await expect(unseal(damaged)).rejects.toBeInstanceOf(SealError);
    }
    await expect(unseal(sealed, 'base:2')).rejects.toThrow(/does not authenticate/);
    await expect(unseal(sealed, 'base:1', randomBytes(32).toString('base64'))).rejects.toThrow(/does not authenticate/);
    // Cut at a chunk boundary: every chunk left authenticates, the last is missing.
    const oneChunk = 29 + 4 + 1024 + 16;
    await expect(unseal(sealed.subarray(0, 29 + oneChunk - 29))).rejects.toThrow(/cut short/);
    await expect(unseal(Buffer.concat([sealed, sealed.subarray(29)]))).rejects.toThrow(SealError);
    await expect(unseal(Buffer.from('hello'))).rejects.toThrow(/too short|bad header/);
  });

  it('streams large inputs in bounded chunks', async () => {
    const parts = Array.from({ length: 40 }, () => randomBytes(100_000));
    const sealed = await collect(Readable.from(parts).pipe(sealStream(key, 'wal:1')));
    expect((await unseal(sealed, 'wal:1')).equals(Buffer.concat(parts))).toBe(true);
  });
});
