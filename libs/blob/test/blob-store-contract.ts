/* eslint-disable jest/no-export -- a shared suite: each store's spec file calls describeBlobStoreContract */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { BlobNotFoundError, BlobTooLargeError, InvalidBlobKeyError, type BlobStore } from '../src/index.js';

export interface ContractSubject {
  store: BlobStore;
  /** What a failed put may have left behind in the backend (temp files, incomplete uploads); must end empty. */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;

/** `total` bytes of random data in 64 KiB chunks, produced lazily, and its SHA-256. */
function randomSource(total: number, failAfter?: number): { body: AsyncIterable<Uint8Array>; sha256: () => string } {
  const hash = createHash('sha256');
  async function* generate() {
    for (let sent = 0; sent < total;) {
      if (failAfter !== undefined && sent >= failAfter) throw new Error('client went away');
      const chunk = randomBytes(Math.min(64 * 1024, total - sent));
      hash.update(chunk);
      sent += chunk.length;
      yield chunk;
    }
  }
  return { body: generate(), sha256: () => hash.digest('hex') };
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/**
 * The behaviour every BlobStore must have, run against each implementation. Sizes above 5 MiB
 * make the S3 store use a multipart upload, so the all-or-nothing rules are checked on that path.
 */
export function describeBlobStoreContract(name: string, open: () => Promise<ContractSubject>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: BlobStore;
    beforeEach(async () => {
      subject = await open();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close();
    });

    it('stores, stats, reads, lists and deletes a blob', async () => {
      const put = await store.put('sources/a.tar', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
      expect(put).toEqual({ bytes: 11, sha256: sha256('hello world') });
      const stat = await store.stat('sources/a.tar');
      expect(stat?.bytes).toBe(11);
      // Within an hour of now: a real modification time, not a placeholder (clocks may differ a little).
      expect(Math.abs(stat!.modifiedAt.getTime() - Date.now())).toBeLessThan(3_600_000);
      expect(await store.exists('sources/a.tar')).toBe(true);
      expect(await text(await store.get('sources/a.tar'))).toBe('hello world');
      await store.put('artifacts/b', Readable.from([Buffer.from('x')]));
      expect(await store.list('sources/')).toEqual(['sources/a.tar']);
      expect(await store.list('')).toEqual(['artifacts/b', 'sources/a.tar']);
      await store.delete('sources/a.tar');
      await store.delete('sources/a.tar');
      expect(await store.exists('sources/a.tar')).toBe(false);
      expect(await store.stat('sources/a.tar')).toBeNull();
      await expect(store.get('sources/a.tar')).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.list('')).toEqual(['artifacts/b']);
    });

    it('stores an empty blob and accepts an async iterable as well as a Readable', async () => {
      expect(await store.put('empty', Readable.from([]))).toEqual({ bytes: 0, sha256: sha256('') });
      expect(await store.stat('empty')).toMatchObject({ bytes: 0 });
      expect(await text(await store.get('empty'))).toBe('');
      async function* parts() {
        yield new TextEncoder().encode('from ');
        yield new TextEncoder().encode('a generator');
      }
      expect(await store.put('gen', parts())).toMatchObject({ bytes: 16 });
      expect(await text(await store.get('gen'))).toBe('from a generator');
    });

    it('streams a 12 MiB blob in and out with its size and SHA-256', async () => {
      const source = randomSource(12 * MiB);
      const put = await store.put('artifacts/large.tar.gz', source.body, { maxBytes: 12 * MiB });
      expect(put).toEqual({ bytes: 12 * MiB, sha256: source.sha256() });
      expect(await store.stat('artifacts/large.tar.gz')).toMatchObject({ bytes: 12 * MiB });
      expect(sha256(await buffer(await store.get('artifacts/large.tar.gz')))).toBe(put.sha256);
    });

    it('keeps nothing when a small stream exceeds maxBytes or fails half-way', async () => {
      await expect(store.put('sources/big.tar', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(
        BlobTooLargeError,
      );
      async function* failing() {
        yield Buffer.from('partial');
        throw new Error('client went away');
      }
      await expect(store.put('sources/half.tar', failing())).rejects.toThrow('client went away');
      expect(await store.exists('sources/big.tar')).toBe(false);
      expect(await store.exists('sources/half.tar')).toBe(false);
      expect(await store.list('')).toEqual([]);
      expect(await subject.leftovers()).toEqual([]);
    });

    it('keeps nothing when a multipart-sized stream exceeds maxBytes or fails after several MiB', async () => {
      await expect(store.put('artifacts/too-big', randomSource(16 * MiB).body, { maxBytes: 11 * MiB })).rejects.toBeInstanceOf(BlobTooLargeError);
      await expect(store.put('artifacts/broken', randomSource(16 * MiB, 11 * MiB).body)).rejects.toThrow('client went away');
      expect(await store.exists('artifacts/too-big')).toBe(false);
      expect(await store.exists('artifacts/broken')).toBe(false);
      expect(await store.list('')).toEqual([]);
      expect(await subject.leftovers()).toEqual([]);
    });

    it('accepts a blob of exactly maxBytes', async () => {
      expect(await store.put('exact', Readable.from([Buffer.alloc(1000, 1)]), { maxBytes: 1000 })).toMatchObject({ bytes: 1000 });
      expect(await store.stat('exact')).toMatchObject({ bytes: 1000 });
    });

    it('keeps the previous blob when a replacement fails, and replaces it when one succeeds', async () => {
      await store.put('k', Readable.from([Buffer.from('one')]));
      await expect(store.put('k', Readable.from([Buffer.alloc(2000)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await text(await store.get('k'))).toBe('one');
      await store.put('k', Readable.from([Buffer.from('two')]));
      expect(await text(await store.get('k'))).toBe('two');
    });

    it('stores concurrent puts intact, and one whole blob when they race on the same key', async () => {
      const bodies = Array.from({ length: 12 }, (_, i) => randomBytes(50_000 + i));
      const puts = await Promise.all(
        bodies.map((body, i) => store.put(`many/${String(i).padStart(2, '0')}`, Readable.from([body.subarray(0, 20_000), body.subarray(20_000)]))),
      );
      expect(puts.map((p) => p.sha256)).toEqual(bodies.map((b) => sha256(b)));
      expect(await store.list('many/')).toEqual(bodies.map((_, i) => `many/${String(i).padStart(2, '0')}`));
      for (const [i, body] of bodies.entries()) expect(sha256(await buffer(await store.get(`many/${String(i).padStart(2, '0')}`)))).toBe(sha256(body));

      const rivals = Array.from({ length: 5 }, () => randomBytes(300_000));
      await Promise.all(rivals.map((body) => store.put('same', Readable.from([body]))));
      const stored = sha256(await buffer(await store.get('same')));
      expect(rivals.map((b) => sha256(b))).toContain(stored);
      expect(await subject.leftovers()).toEqual([]);
    });

    it('lists by plain string prefix, sorted, nested keys included', async () => {
      for (const key of ['sources/b.tar', 'sources/a.tar', 'sources/ab/c', 'artifacts/x', 'sourcesx', 'z']) {
        await store.put(key, Readable.from([Buffer.from(key)]));
      }
      expect(await store.list('sources/')).toEqual(['sources/a.tar', 'sources/ab/c', 'sources/b.tar']);
      expect(await store.list('sources/a')).toEqual(['sources/a.tar', 'sources/ab/c']);
      expect(await store.list('sources')).toEqual(['sources/a.tar', 'sources/ab/c', 'sources/b.tar', 'sourcesx']);
      expect(await store.list('nothing/')).toEqual([]);
      expect(await store.list('')).toEqual(['artifacts/x', 'sources/a.tar', 'sources/ab/c', 'sources/b.tar', 'sourcesx', 'z']);
    });

    it('refuses keys that could leave the root, in every operation', async () => {
      for (const key of ['../x', 'a/../../x', '/etc/passwd', 'a//b', '.hidden', 'a\\b', '', 'a/', 'x'.repeat(513)]) {
        await expect(store.put(key, Readable.from([]))).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.get(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.stat(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      }
      expect(await store.list('')).toEqual([]);
    });
  });
}
