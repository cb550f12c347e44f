import type { Provider } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { PlatformInfrastructure } from '@slipway/platform-data';

export const BLOB_STORE = Symbol('BLOB_STORE');

/** The blob store `PlatformDataModule` wired (one per process). */
export const blobStoreProvider: Provider<BlobStore> = {
  provide: BLOB_STORE,
  inject: [PlatformInfrastructure],
  useFactory: (platform: PlatformInfrastructure) => platform.blobs,
};
