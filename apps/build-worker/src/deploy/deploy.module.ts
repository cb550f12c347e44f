import { join } from 'node:path';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { PlatformInfrastructure } from '@slipway/platform-data';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { buildLimitSettings } from '../sandbox/build-limits.js';
import { SandboxProvider } from '../sandbox/sandbox-provider.js';
import { StorageJanitorService } from '../storage/storage-janitor.service.js';
import { ApplicationSecrets } from './application-secrets.js';
import { DeployPipelineService } from './deploy-pipeline.service.js';
import { DeployWorker } from './deploy.worker.js';
import { ReconcilerService } from './reconciler.service.js';
import { SignInOrigins } from './sign-in-origins.js';
import { BLOBS, PUBLISHER, SANDBOX, buildDirOf } from '../tokens.js';

@Module({})
export class DeployModule {
  static register(config: WorkerConfig): DynamicModule {
    return {
      module: DeployModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        { provide: BLOBS, useFactory: (platform: PlatformInfrastructure) => platform.blobs, inject: [PlatformInfrastructure] },
        {
          provide: SANDBOX,
          useFactory: () => {
            const provider = new SandboxProvider({
              setting: config.BUILD_SANDBOX,
              buildUser: config.BUILD_USER,
              workspacesDir: join(buildDirOf(config), 'workspaces'),
              path: config.PATH,
              limits: buildLimitSettings(config),
            });
            const logger = new Logger('sandbox');
            // Checked at start for the operator's benefit, without holding the start-up (a probe
            // starts pasta); deploys check again (SandboxProvider) and join this probe if it runs.
            void provider.acquire().then(
              ({ mode, limits }) => {
                if (mode.kind === 'bwrap') logger.log(`builds run in pasta + bubblewrap as uid ${mode.uid}`);
                else logger.warn(`builds run WITHOUT a sandbox: ${mode.reason}`);
                logger.log(`build limits: ${limits.describe()}`);
              },
              (error: Error) =>
                logger.error(
                  `builds cannot be sandboxed here, so every deploy that runs code fails with sandbox_unavailable until this is fixed: ${error.message}`,
                ),
            );
            return provider;
          },
        },
        { provide: PUBLISHER, useFactory: (platform: PlatformInfrastructure) => platform.redis, inject: [PlatformInfrastructure] },
        ApplicationSecrets,
        DeployPipelineService,
        SignInOrigins,
        DeployWorker,
        ReconcilerService,
        StorageJanitorService,
      ],
      exports: [ReconcilerService, SANDBOX],
    };
  }
}
