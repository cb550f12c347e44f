import type { Provider } from '@nestjs/common';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

export const BLOB_STORE = Symbol('BLOB_STORE');

export const blobStoreProvider: Provider<BlobStore> = {
  provide: BLOB_STORE,
  inject: [GATEWAY_CONFIG],
  useFactory: (config: GatewayConfig) => createBlobStore(config),
};
