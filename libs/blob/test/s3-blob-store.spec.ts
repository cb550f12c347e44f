import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { startS3Emulator, type S3Emulator } from '@slipway/s3-emulator';
import { S3BlobStore, createBlobStore, s3ClientFrom } from '../src/index.js';
import { describeBlobStoreContract } from './blob-store-contract.js';

// Against an S3-protocol emulator (s3rver) over real HTTP, not AWS: see libs/s3-emulator.
describeBlobStoreContract('S3BlobStore (s3rver emulator)', async () => {
  const emulator = await startS3Emulator();
  return { store: createBlobStore(emulator.env), leftovers: () => emulator.incompleteUploads(), close: () => emulator.close() };
});

describeBlobStoreContract('S3BlobStore with S3_PREFIX (s3rver emulator)', async () => {
  const emulator = await startS3Emulator();
  return {
    store: createBlobStore({ ...emulator.env, S3_PREFIX: 'installations/one/' }),
    leftovers: () => emulator.incompleteUploads(),
    close: () => emulator.close(),
  };
});

describe('S3BlobStore specifics (s3rver emulator)', () => {
  let emulator: S3Emulator;
  beforeEach(async () => {
    emulator = await startS3Emulator();
  });
  afterEach(async () => {
    await emulator.close();
  });

  it('creates the S3 store when S3_ENDPOINT is set', () => {
    expect(createBlobStore({ ...emulator.env, SLIPWAY_HOME: '/srv/slipway' })).toBeInstanceOf(S3BlobStore);
  });

  it('sends a large blob as a multipart upload completed only at the end', async () => {
    const store = createBlobStore(emulator.env);
    await store.put('artifacts/a', Readable.from([Buffer.alloc(12 * 1024 * 1024, 7)]));
    const ops = emulator.operations.filter((op) => op !== 'HeadObject');
    expect(ops[0]).toBe('CreateMultipartUpload');
    expect(ops.filter((op) => op === 'UploadPart')).toHaveLength(3);
    expect(ops.at(-1)).toBe('CompleteMultipartUpload');
    expect(ops).not.toContain('PutObject');
  });

  it('aborts the multipart upload of an oversized blob: no object, no parts left', async () => {
    const store = createBlobStore(emulator.env);
    async function* endless() {
      for (;;) yield Buffer.alloc(256 * 1024, 1);
    }
    await expect(store.put('artifacts/endless', endless(), { maxBytes: 11 * 1024 * 1024 })).rejects.toThrow('blob exceeds 11534336 bytes');
    expect(emulator.operations).toContain('CreateMultipartUpload');
    expect(emulator.operations).toContain('UploadPart');
    expect(emulator.operations).toContain('AbortMultipartUpload');
    expect(emulator.operations).not.toContain('CompleteMultipartUpload');
    expect(await emulator.incompleteUploads()).toEqual([]);
    expect(await store.exists('artifacts/endless')).toBe(false);
  });

  it('pages through more than 1000 keys (the server caps a page at 1000)', async () => {
    const store = createBlobStore(emulator.env);
    const keys = Array.from({ length: 1005 }, (_, i) => `sources/${String(i).padStart(4, '0')}.tar`);
    for (let i = 0; i < keys.length; i += 25) {
      await Promise.all(keys.slice(i, i + 25).map((key) => store.put(key, Readable.from([Buffer.from('x')]))));
    }
    emulator.operations.length = 0;
    expect(await store.list('sources/')).toEqual(keys);
    expect(emulator.operations.filter((op) => op === 'ListObjectsV2')).toHaveLength(2);
  });

  it('pages with a smaller page size and returns the keys sorted', async () => {
    const store = new S3BlobStore({ client: s3ClientFrom(emulator.env), bucket: emulator.bucket, prefix: 'p', listPageSize: 7 });
    const keys = Array.from({ length: 30 }, (_, i) => `k/${String(29 - i).padStart(2, '0')}`);
    await Promise.all(keys.map((key) => store.put(key, Readable.from([Buffer.from(key)]))));
    emulator.operations.length = 0;
    expect(await store.list('k/')).toEqual([...keys].sort());
    expect(emulator.operations.filter((op) => op === 'ListObjectsV2')).toHaveLength(5);
  });

  it('keeps installations with different S3_PREFIX apart in one bucket', async () => {
    const one = createBlobStore({ ...emulator.env, S3_PREFIX: 'one' });
    const two = createBlobStore({ ...emulator.env, S3_PREFIX: 'two' });
    const root = createBlobStore(emulator.env);
    await one.put('sources/a.tar', Readable.from([Buffer.from('one')]));
    await two.put('sources/a.tar', Readable.from([Buffer.from('two')]));
    expect(await text(await one.get('sources/a.tar'))).toBe('one');
    expect(await text(await two.get('sources/a.tar'))).toBe('two');
    expect(await one.list('')).toEqual(['sources/a.tar']);
    expect(await root.list('')).toEqual(['one/sources/a.tar', 'two/sources/a.tar']);
    await one.delete('sources/a.tar');
    expect(await two.exists('sources/a.tar')).toBe(true);
  });

  it('fails with the server’s refusal, and no secret in the error, when the credentials are wrong', async () => {
    // s3rver checks the access key id but not the V4 signature, so the key id is what is wrong here.
    const store = createBlobStore({ ...emulator.env, S3_ACCESS_KEY_ID: 'NOT-A-KNOWN-KEY', S3_SECRET_ACCESS_KEY: 'secret-value-1234' });
    const attempt = store.put('k', Readable.from([Buffer.from('x')]));
    await expect(attempt).rejects.toThrow(/Access Key Id you provided does not exist/);
    const error = (await attempt.catch((e: unknown) => e)) as Error;
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain('secret-value-1234');
    await expect(store.list('')).rejects.toThrow(/Access Key Id/);
    expect(await createBlobStore(emulator.env).exists('k')).toBe(false);
  });
});
