import { Module } from '@nestjs/common';
import { PipelineModule } from '../pipeline/index.js';
import { TenantsModule } from '../tenants/index.js';
import { TokensModule } from '../tokens/index.js';
import { SessionCache } from './session-cache.js';
import { SessionReadsFastPath } from './session-reads.fast-path.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsRepository } from './sessions.repository.js';
import { SessionsService } from './sessions.service.js';

/** Sessions (start, read, refresh, revoke), their cache across replicas, and the session-read routes with their fast path. */
@Module({
  imports: [TenantsModule, TokensModule, PipelineModule],
  controllers: [SessionsController],
  providers: [SessionsRepository, SessionCache, SessionsService, SessionReadsFastPath],
  exports: [SessionsService],
})
export class SessionsModule {}
