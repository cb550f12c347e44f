import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { startS3Emulator, type S3Emulator } from './index.js';

// The emulator's own additions must behave like S3, or the blob tests that rely on them prove nothing.
describe('s3rver with the S3 operations it lacks', () => {
  let emulator: S3Emulator;
  let s3: S3Client;
  beforeAll(async () => {
    emulator = await startS3Emulator('emulator-test');
    s3 = new S3Client({
      endpoint: emulator.env.S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: emulator.env.S3_ACCESS_KEY_ID, secretAccessKey: emulator.env.S3_SECRET_ACCESS_KEY },
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
  });
  afterAll(async () => {
    s3.destroy();
    await emulator.close();
  });
  const Bucket = 'emulator-test';

  it('lists an incomplete multipart upload until it is aborted, and refuses an unknown upload id', async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'a/b' }));
    await s3.send(new UploadPartCommand({ Bucket, Key: 'a/b', UploadId, PartNumber: 1, Body: Buffer.alloc(1024, 1) }));
    await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'other' }));
    expect(await emulator.incompleteUploads()).toEqual(expect.arrayContaining(['a/b', 'other']));
    expect(await emulator.incompleteUploads('a/')).toEqual(['a/b']);
    await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'a/b', UploadId }));
    expect(await emulator.incompleteUploads('a/')).toEqual([]);
    await expect(s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'a/b', UploadId }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    expect(emulator.operations).toEqual(expect.arrayContaining(['CreateMultipartUpload', 'UploadPart', 'ListMultipartUploads', 'AbortMultipartUpload']));
  });

  it('pages ListObjectsV2 with continuation tokens (DES in s3rver, mapped for OpenSSL 3)', async () => {
    for (const key of ['p/1', 'p/2', 'p/3']) await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: key }));
    const first = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'p/', MaxKeys: 2 }));
    expect(first.Contents?.map((o) => o.Key)).toEqual(['p/1', 'p/2']);
    expect(first.IsTruncated).toBe(true);
    const second = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'p/', MaxKeys: 2, ContinuationToken: first.NextContinuationToken }));
    expect(second.Contents?.map((o) => o.Key)).toEqual(['p/3']);
    expect(second.IsTruncated).toBe(false);
  });

  it('answers a PutObject only once the object is complete, and replaces it whole', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 7);
    await s3.send(new PutObjectCommand({ Bucket, Key: 'big', Body: big }));
    const read = await s3.send(new GetObjectCommand({ Bucket, Key: 'big' }));
    expect((await read.Body!.transformToByteArray()).length).toBe(big.length);
    await s3.send(new PutObjectCommand({ Bucket, Key: 'big', Body: 'small' }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'big' }))).Body!.transformToString()).toBe('small');
  });
});
