import { Logger, Module } from '@nestjs/common';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { TENANT_CONNECTION_BUDGET, readServerConnections, tenantConnectionBudget } from './tenant-connection-budget.js';
import { TenantPools } from './tenant-pools.js';
import { TenantsService } from './tenants.service.js';

/** Resolves `/a/{slug}` to its tenant (cached configuration) and hands out the tenant's database handle. */
@Module({
  providers: [
    {
      // Checked once at boot against the server: the sign-in service's pools fit inside its
      // max_connections with room for the platform, or the service does not start.
      provide: TENANT_CONNECTION_BUDGET,
      inject: [AUTH_CONFIG],
      useFactory: async (config: AuthConfig) => {
        const budget = tenantConnectionBudget(config, await readServerConnections(config.APP_DATABASES_ADMIN_URL));
        const logger = new Logger('TenantPools');
        if (budget.sizedDown) logger.warn(`sized down to fit the server: ${budget.sizedDown}`);
        logger.log(
          `tenant connections: at most ${budget.connections} (${budget.pools} pools × ${budget.poolSize}${config.SLIPWAY_SERVICE_PROCESSES > 1 ? `; this process's share, 1 of ${config.SLIPWAY_SERVICE_PROCESSES}` : ''})`,
        );
        return budget;
      },
    },
    TenantPools,
    TenantsService,
  ],
  exports: [TenantsService, TENANT_CONNECTION_BUDGET],
})
export class TenantsModule {}
