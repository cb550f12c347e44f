import { Module, type DynamicModule } from '@nestjs/common';
import { processShare } from '@slipway/config';
import { workerHeartbeatPattern } from '@slipway/messaging';
import { PlatformDataModule } from '@slipway/platform-data';
import { HealthModule } from '@slipway/server';
import { CommonModule } from './common/common.module.js';
import { GatewayConfigModule } from './common/gateway-config.module.js';
import type { GatewayConfig } from './config.js';
import { ApplicationsModule } from './applications/applications.module.js';
import { ContractModule } from './contract/contract.module.js';
import { CredentialsModule } from './credentials/credentials.module.js';
import { OwnerAuthModule } from './owners/accounts/owner-auth.module.js';
import { PlatformStatusModule } from './platform-status/platform-status.module.js';
import { DashboardSiteModule } from './dashboard-site/dashboard-site.module.js';
import { DeploymentsModule } from './deployments/deployments.module.js';
import { DomainsModule } from './domains/domains.module.js';
import { LogsModule } from './logs/logs.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OwnersApiModule } from './owners-api/owners-api.module.js';
import { SecretsModule } from './secrets/secrets.module.js';
import { SignInModule } from './sign-in-services/sign-in.module.js';

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
        SignInModule,
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
