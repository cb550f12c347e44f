import { Global, Module } from '@nestjs/common';
import { blobStoreProvider, BLOB_STORE } from './blob-store.provider.js';
import { RoutesPublisher } from './routes.publisher.js';
import { UploadLeftovers } from './upload-leftovers.js';

/** Shared pieces of the gateway's features: the blob store (from PlatformDataModule) and the edges' routes channel. */
@Global()
@Module({
  providers: [blobStoreProvider, RoutesPublisher, UploadLeftovers],
  exports: [BLOB_STORE, RoutesPublisher],
})
export class CommonModule {}
