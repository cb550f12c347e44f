import { Global, Module } from '@nestjs/common';
import { blobStoreProvider, BLOB_STORE } from './blob-store.provider.js';
import { PrismaService } from './prisma.service.js';

/** Shared infrastructure of the gateway's features: the database client and the blob store. */
@Global()
@Module({
  providers: [PrismaService, blobStoreProvider],
  exports: [PrismaService, BLOB_STORE],
})
export class CommonModule {}
