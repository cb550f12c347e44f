import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { createHash } from 'node:crypto';
import { BlobNotFoundError, BlobTooLargeError, InvalidBlobKeyError, LocalBlobStore, blobDirFrom, sourceFileMode, sourceKey } from './index.js';

describe('LocalBlobStore (real file system)', () => {
  let root: string;
  let store: LocalBlobStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-blob-'));
    store = new LocalBlobStore(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('stores, stats, reads, lists and deletes a blob', async () => {
    const put = await store.put('sources/a.tar', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(put).toEqual({ bytes: 11, sha256: createHash('sha256').update('hello world').digest('hex') });
    expect(await store.stat('sources/a.tar')).toMatchObject({ bytes: 11 });
    expect(await text(await store.get('sources/a.tar'))).toBe('hello world');
    await store.put('artifacts/b', Readable.from([Buffer.from('x')]));
    expect(await store.list('sources/')).toEqual(['sources/a.tar']);
    expect(await store.list('')).toEqual(['artifacts/b', 'sources/a.tar']);
    await store.delete('sources/a.tar');
    await store.delete('sources/a.tar');
    expect(await store.exists('sources/a.tar')).toBe(false);
    await expect(store.get('sources/a.tar')).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('keeps nothing when the stream exceeds maxBytes or fails half-way', async () => {
    await expect(store.put('sources/big.tar', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
    async function* failing() {
      yield Buffer.from('partial');
      throw new Error('client went away');
    }
    await expect(store.put('sources/half.tar', failing())).rejects.toThrow('client went away');
    expect(await store.exists('sources/big.tar')).toBe(false);
    expect(await store.exists('sources/half.tar')).toBe(false);
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  it('creates missing directories on demand, with or without fsync and digest', async () => {
    await rm(root, { recursive: true, force: true });
    const quick = new LocalBlobStore(root, { fsync: false });
    expect(await quick.put('sources/q.tar', Readable.from([Buffer.from('quick')]), { digest: false })).toEqual({ bytes: 5, sha256: null });
    await rm(join(root, 'sources'), { recursive: true });
    expect((await store.put('sources/d.tar', Readable.from([Buffer.from('durable')]))).bytes).toBe(7);
    expect(await text(await store.get('sources/d.tar'))).toBe('durable');
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  it('replaces a blob atomically', async () => {
    await store.put('k', Readable.from([Buffer.from('one')]));
    await store.put('k', Readable.from([Buffer.from('two')]));
    expect(await text(await store.get('k'))).toBe('two');
  });

  it('refuses keys that could leave the root', async () => {
    for (const key of ['../x', 'a/../../x', '/etc/passwd', 'a//b', '.hidden', 'a\\b', '']) {
      await expect(store.put(key, Readable.from([]))).rejects.toBeInstanceOf(InvalidBlobKeyError);
    }
  });
});

describe('source format helpers', () => {
  it('names the source blob of a deployment and normalises modes', () => {
    expect(sourceKey('3f1c0e2a-0000-4000-8000-000000000000')).toBe('sources/3f1c0e2a-0000-4000-8000-000000000000.tar');
    expect(sourceFileMode(0o100755)).toBe(0o755);
    expect(sourceFileMode(0o4744)).toBe(0o755);
    expect(sourceFileMode(0o600)).toBe(0o644);
    expect(sourceFileMode(undefined)).toBe(0o644);
  });

  it('resolves the blob directory from BLOB_DIR or SLIPWAY_HOME', () => {
    expect(blobDirFrom({ BLOB_DIR: '/data/blobs' })).toBe('/data/blobs');
    expect(blobDirFrom({ SLIPWAY_HOME: '/srv/slipway' }, '/x')).toBe('/srv/slipway/blobs');
    expect(blobDirFrom({}, '/repo')).toBe('/repo/.slipway/blobs');
  });
});
