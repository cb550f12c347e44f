import { join } from 'node:path';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { createBlobStore } from '@slipway/blob';
import { createPrismaClient } from '@slipway/db';
import { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { detectSandbox } from '../sandbox/sandbox-detect.js';
import { ApplicationSecrets } from './application-secrets.js';
import { DeployPipelineService } from './deploy-pipeline.service.js';
import { DeployWorker } from './deploy.worker.js';
import { DeploymentRepository, PRISMA } from './deployment.repository.js';
import { DisposeClients } from './dispose-clients.js';
import { ReconcilerService } from './reconciler.service.js';
import { SignInOrigins } from './sign-in-origins.js';
import { BLOBS, PUBLISHER, SANDBOX, buildDirOf } from './tokens.js';

@Module({})
export class DeployModule {
  static register(config: WorkerConfig): DynamicModule {
    return {
      module: DeployModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        {
          provide: PRISMA,
          useFactory: () => createPrismaClient(config.DATABASE_URL, { max: 4 }),
        },
        { provide: BLOBS, useFactory: () => createBlobStore(config) },
        {
          provide: SANDBOX,
          useFactory: async () => {
            const mode = await detectSandbox(config.BUILD_SANDBOX, config.BUILD_USER, join(buildDirOf(config), 'workspaces'));
            new Logger('sandbox').log(mode.kind === 'bwrap' ? `builds run in bubblewrap as uid ${mode.uid}` : `builds run WITHOUT a sandbox: ${mode.reason}`);
            return new Sandbox(mode);
          },
        },
        { provide: PUBLISHER, useFactory: () => new Redis(config.REDIS_URL, { maxRetriesPerRequest: null }) },
        DeploymentRepository,
        ApplicationSecrets,
        DeployPipelineService,
        SignInOrigins,
        DeployWorker,
        ReconcilerService,
        DisposeClients,
      ],
      exports: [ReconcilerService, SANDBOX],
    };
  }
}
