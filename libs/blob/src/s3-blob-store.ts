import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  BlobNotFoundError,
  BlobTooLargeError,
  assertBlobKey,
  isBlobKey,
  type BlobStat,
  type BlobStore,
  type PutOptions,
  type StoredBlob,
} from './blob-store.js';

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** Keys are stored as `<prefix>/<key>`; empty or absent: at the bucket's root. */
  prefix?: string;
  /** ListObjectsV2 page size (S3 caps it at 1000). */
  listPageSize?: number;
  /** Multipart part size; S3's minimum (5 MiB) by default. */
  partSizeBytes?: number;
  /** Parts uploaded at once; a put holds at most about (this + 1) parts in memory. */
  partConcurrency?: number;
}

/**
 * Blobs as objects in an S3-compatible bucket. A put streams through a byte counter and SHA-256
 * into a multipart upload (lib-storage's `Upload`; one PutObject when the blob fits in one part)
 * that is only completed once the source ended within `maxBytes`: S3 makes an object visible
 * when CompleteMultipartUpload succeeds, so readers see the whole blob or none. An oversized or
 * failed source aborts the upload (AbortMultipartUpload), which discards the parts sent so far.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly listPageSize: number;
  private readonly partSizeBytes: number | undefined;
  private readonly partConcurrency: number;

  constructor(options: S3BlobStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    const prefix = (options.prefix ?? '').replace(/\/+$/, '');
    if (prefix) assertBlobKey(prefix);
    this.prefix = prefix ? `${prefix}/` : '';
    this.listPageSize = options.listPageSize ?? 1000;
    this.partSizeBytes = options.partSizeBytes;
    this.partConcurrency = options.partConcurrency ?? 4;
  }

  private objectKey(key: string): string {
    assertBlobKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<StoredBlob> {
    const objectKey = this.objectKey(key);
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const hash = createHash('sha256');
    let bytes = 0;
    let sourceError: unknown;
    async function* metered(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
          const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          bytes += data.length;
          if (bytes > maxBytes) throw new BlobTooLargeError(maxBytes);
          hash.update(data);
          yield data;
        }
      } catch (error) {
        sourceError = error;
        throw error;
      }
    }
    const source = Readable.from(metered(), { objectMode: false });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: source },
      queueSize: this.partConcurrency,
      leavePartsOnError: false,
      ...(this.partSizeBytes ? { partSize: this.partSizeBytes } : {}),
    });
    try {
      await upload.done();
    } catch (error) {
      // Stop reading the caller's stream (as a failed pipeline would) and report the cause the
      // caller can act on: the source's own error or BlobTooLargeError, not the SDK's echo of it.
      source.destroy();
      throw sourceError ?? error;
    }
    return { bytes, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<Readable> {
    const objectKey = this.objectKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      if (!(object.Body instanceof Readable)) throw new Error(`S3 GetObject ${objectKey}: the response has no readable body`);
      return object.Body;
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  async stat(key: string): Promise<BlobStat | null> {
    const objectKey = this.objectKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return { bytes: head.ContentLength ?? 0, modifiedAt: head.LastModified ?? new Date(0) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    // S3's DeleteObject already succeeds for a missing key.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, MaxKeys: this.listPageSize, ContinuationToken: continuationToken }),
      );
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.prefix.length);
        // Objects someone else put under our prefix with names no store key can have are skipped,
        // so every listed key can be passed back to get, stat and delete.
        if (key && isBlobKey(key)) keys.push(key);
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
    return keys.sort();
  }
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
}
