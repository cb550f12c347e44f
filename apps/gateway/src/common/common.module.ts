import { Global, Module } from '@nestjs/common';
import { blobStoreProvider, BLOB_STORE } from './blob-store.provider.js';
import { PrismaService } from './prisma.service.js';
import { RoutesPublisher } from './routes.publisher.js';

/** Shared infrastructure of the gateway's features: the database client, the blob store and the edges' routes channel. */
@Global()
@Module({
  providers: [PrismaService, blobStoreProvider, RoutesPublisher],
  exports: [PrismaService, BLOB_STORE, RoutesPublisher],
})
export class CommonModule {}
