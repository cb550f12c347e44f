import { Module, type DynamicModule } from '@nestjs/common';
import { processShare } from '@slipway/config';
import { workerHeartbeatPattern } from '@slipway/messaging';
import { PlatformDataModule } from '@slipway/platform-data';
import { HealthModule } from '@slipway/service-kit';
import { CommonModule, GatewayConfigModule } from './common/index.js';
import type { GatewayConfig } from './config.js';
import { ApplicationsModule } from './applications/index.js';
import { ContractModule } from './contract/index.js';
import { CredentialsModule } from './credentials/index.js';
import { OwnerAuthModule } from './owners/index.js';
import { PlatformStatusModule } from './platform-status/index.js';
import { DashboardSiteModule } from './dashboard-site/index.js';
import { DeploymentsModule } from './deployments/index.js';
import { DomainsModule } from './domains/index.js';
import { LogsModule } from './logs/index.js';
import { MetricsModule } from './metrics/index.js';
import { OwnersApiModule } from './owners-api/index.js';
import { SecretsModule } from './secrets/index.js';
import { SignInServicesModule } from './sign-in-services/index.js';

/** The gateway's Postgres connections (one pool per process; processes on the launcher's socket divide it). */
const GATEWAY_PG_CONNECTIONS = 10;

@Module({})
export class AppModule {
  static register(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        GatewayConfigModule.forRoot(config),
        PlatformDataModule.register(config, { poolSize: processShare(GATEWAY_PG_CONNECTIONS, config.SLIPWAY_SERVICE_PROCESSES, 2), blobs: true }),
        CommonModule,
        HealthModule.forRoot({
          service: 'gateway',
          postgresUrl: config.DATABASE_URL,
          redisUrl: config.REDIS_URL,
          siblings: {
            'build-worker': {
              heartbeatPattern: workerHeartbeatPattern(config.QUEUE_PREFIX),
              whenDown: 'no build worker is consuming the deploy queue: deploys are accepted and wait in the queue',
            },
          },
        }),
        ContractModule,
        DeploymentsModule,
        SecretsModule,
        SignInServicesModule,
        CredentialsModule,
        DomainsModule,
        LogsModule,
        MetricsModule,
        ApplicationsModule,
        OwnerAuthModule,
        PlatformStatusModule,
        OwnersApiModule,
        DashboardSiteModule,
      ],
    };
  }
}
