import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describeBlobStoreContract } from '../test/blob-store-contract.js';
import { LocalBlobStore, blobDirFrom, createBlobStore, sourceFileMode, sourceKey } from './index.js';

describeBlobStoreContract('LocalBlobStore (real file system)', async () => {
  const root = await mkdtemp(join(tmpdir(), 'slipway-blob-'));
  const store = new LocalBlobStore(root);
  return {
    store,
    leftovers: () => readdir(join(root, '.tmp')).catch(() => []),
    close: async () => {
      await store.close();
      await rm(root, { recursive: true, force: true });
    },
  };
});

describe('LocalBlobStore options', () => {
  it('creates missing directories on demand, with or without fsync and digest', async () => {
    const root = await mkdtemp(join(tmpdir(), 'slipway-blob-'));
    try {
      await rm(root, { recursive: true, force: true });
      const quick = new LocalBlobStore(root, { fsync: false });
      expect(await quick.put('sources/q.tar', Readable.from([Buffer.from('quick')]), { digest: false })).toEqual({ bytes: 5, sha256: null });
      await rm(join(root, 'sources'), { recursive: true });
      const store = new LocalBlobStore(root);
      expect((await store.put('sources/d.tar', Readable.from([Buffer.from('durable')]))).bytes).toBe(7);
      expect(await text(await store.get('sources/d.tar'))).toBe('durable');
      expect(await readdir(join(root, '.tmp'))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('LocalBlobStore directory fsync shared by concurrent puts', () => {
  it('stores every one of many concurrent puts into two directories, then keeps working', async () => {
    const root = await mkdtemp(join(tmpdir(), 'slipway-blob-'));
    try {
      const store = new LocalBlobStore(root);
      const keys = Array.from({ length: 30 }, (_, i) => `${i % 2 ? 'sources' : 'releases'}/b-${i}.tar`);
      const puts = await Promise.all(keys.map((key) => store.put(key, Readable.from([Buffer.from(key)]), { digest: false })));
      expect(puts.map((p) => p.bytes)).toEqual(keys.map((k) => k.length));
      for (const key of keys) expect(await text(await store.get(key))).toBe(key);
      await rm(join(root, 'sources'), { recursive: true });
      expect((await store.put('sources/again.tar', Readable.from([Buffer.from('again')]))).bytes).toBe(5);
      expect(await store.list('')).toEqual([...keys.filter((k) => k.startsWith('releases/')), 'sources/again.tar'].sort());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('LocalBlobStore.sweepTemp: what a put killed mid-write left', () => {
  it('removes .part files not written for the given time, and leaves a put in progress and everything else', async () => {
    const root = await mkdtemp(join(tmpdir(), 'slipway-blob-sweep-'));
    const store = new LocalBlobStore(root, { fsync: false });
    try {
      expect(await store.sweepTemp(1000)).toEqual({ files: 0, bytes: 0 });
      await mkdir(join(root, '.tmp'), { recursive: true });
      await writeFile(join(root, '.tmp', 'orphan.part'), Buffer.alloc(4096));
      await writeFile(join(root, '.tmp', 'fresh.part'), 'x');
      await writeFile(join(root, '.tmp', 'not-a-part'), 'x');
      const hourAgo = new Date(Date.now() - 3_600_000);
      await utimes(join(root, '.tmp', 'orphan.part'), hourAgo, hourAgo);
      await utimes(join(root, '.tmp', 'not-a-part'), hourAgo, hourAgo);
      // A put whose body is still arriving: its .part is fresh, so it survives the sweep and completes.
      const body = new PassThrough();
      const put = store.put('sources/in-flight.tar', body);
      body.write('first half ');
      expect(await store.sweepTemp(60_000)).toEqual({ files: 1, bytes: 4096 });
      body.end('second half');
      expect(await put).toMatchObject({ bytes: 22 });
      expect(await text(await store.get('sources/in-flight.tar'))).toBe('first half second half');
      expect((await readdir(join(root, '.tmp'))).sort()).toEqual(['fresh.part', 'not-a-part']);
    } finally {
      await store.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('source format helpers', () => {
  it('names the source blob of a deployment and normalises modes', () => {
    expect(sourceKey('3f1c0e2a-0000-4000-8000-000000000000')).toBe('sources/3f1c0e2a-0000-4000-8000-000000000000.tar.gz');
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

  it('creates the local store when S3_ENDPOINT is not set', () => {
    const store = createBlobStore({ BLOB_DIR: '/data/blobs' });
    expect(store).toBeInstanceOf(LocalBlobStore);
    expect((store as LocalBlobStore).root).toBe('/data/blobs');
  });
});
