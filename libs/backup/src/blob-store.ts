import { blobStorageFields, createBlobStore, type BlobStore } from '@slipway/blob';
import { z } from '@slipway/config';

/** The blob store a process of the platform with this environment and home uses (BLOB_DIR / S3_* / `<home>/blobs`). */
export function blobStoreFor(env: NodeJS.ProcessEnv, home: string): BlobStore {
  const settings = z.object(blobStorageFields).parse(env);
  return createBlobStore({ ...settings, SLIPWAY_HOME: home });
}
