import { isAbsolute, join, resolve } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { ConfigError } from '@slipway/config';
import { blobStorageProblems, type BlobStorageSettings } from './blob-config.js';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local-blob-store.js';
import { S3BlobStore } from './s3-blob-store.js';

export interface BlobStoreConfig extends BlobStorageSettings {
  SLIPWAY_HOME?: string | undefined;
  /** 'false' turns off the fsync of each blob (LocalBlobStoreOptions.fsync); default on. */
  BLOB_FSYNC?: string | boolean | undefined;
}

/** `BLOB_DIR`, else `<SLIPWAY_HOME or .slipway>/blobs`, resolved against the working directory. */
export function blobDirFrom(config: BlobStoreConfig, cwd: string = process.cwd()): string {
  if (config.BLOB_DIR) return isAbsolute(config.BLOB_DIR) ? config.BLOB_DIR : resolve(cwd, config.BLOB_DIR);
  return resolve(cwd, join(config.SLIPWAY_HOME || '.slipway', 'blobs'));
}

/**
 * The S3 store when `S3_ENDPOINT` is set, else the local one. Apps validate these variables with
 * `blobStorageFields` + `checkBlobStorage` at boot; this checks again for callers that did not.
 */
export function createBlobStore(config: BlobStoreConfig): BlobStore {
  const problems = blobStorageProblems(config);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `${p.variable}: ${p.message}`).join('; '));
  if (!config.S3_ENDPOINT) return new LocalBlobStore(blobDirFrom(config), { fsync: fsyncFrom(config.BLOB_FSYNC) });
  return new S3BlobStore({ client: s3ClientFrom(config), bucket: config.S3_BUCKET!, prefix: config.S3_PREFIX });
}

/** An S3 client for an S3-compatible endpoint (validated settings). */
export function s3ClientFrom(config: BlobStorageSettings): S3Client {
  return new S3Client({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION ?? 'us-east-1',
    forcePathStyle: config.S3_FORCE_PATH_STYLE ?? true,
    ...(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY } }
      : {}),
    // The SDK's newer default adds CRC32 checksums (and aws-chunked bodies) to every upload, which
    // several S3-compatible servers reject; checksums only where an operation requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** `BLOB_FSYNC`: on unless 'false', '0' or false (LocalBlobStoreOptions.fsync). */
function fsyncFrom(value: BlobStoreConfig['BLOB_FSYNC']): boolean {
  return value === undefined || (value !== false && value !== 'false' && value !== '0');
}
