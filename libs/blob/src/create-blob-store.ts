import { isAbsolute, join, resolve } from 'node:path';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local-blob-store.js';

export interface BlobStoreConfig {
  /** Root of the local store; default `<SLIPWAY_HOME>/blobs`. */
  BLOB_DIR?: string | undefined;
  SLIPWAY_HOME?: string | undefined;
  /** 'false' turns off the fsync of each blob (LocalBlobStoreOptions.fsync); default on. */
  BLOB_FSYNC?: string | boolean | undefined;
}

/** `BLOB_DIR`, else `<SLIPWAY_HOME or .slipway>/blobs`, resolved against the working directory. */
export function blobDirFrom(config: BlobStoreConfig, cwd: string = process.cwd()): string {
  if (config.BLOB_DIR) return isAbsolute(config.BLOB_DIR) ? config.BLOB_DIR : resolve(cwd, config.BLOB_DIR);
  return resolve(cwd, join(config.SLIPWAY_HOME || '.slipway', 'blobs'));
}

export function createBlobStore(config: BlobStoreConfig): BlobStore {
  const fsync = config.BLOB_FSYNC === undefined ? true : config.BLOB_FSYNC !== false && config.BLOB_FSYNC !== 'false' && config.BLOB_FSYNC !== '0';
  return new LocalBlobStore(blobDirFrom(config), { fsync });
}
