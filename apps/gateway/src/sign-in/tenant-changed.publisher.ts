import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { TENANT_CHANGED_CHANNEL } from '@slipway/queue';
import { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/**
 * Tells every auth-service replica to drop its cached copy of a tenant. Best effort: a replica
 * that misses the message refreshes its copy after AUTH_TENANT_CACHE_SECONDS anyway.
 */
@Injectable()
export class TenantChangedPublisher implements OnModuleDestroy {
  private readonly logger = new Logger('TenantChanged');
  private readonly redis: Redis;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  async publish(applicationId: string): Promise<void> {
    try {
      await this.redis.publish(TENANT_CHANGED_CHANNEL, applicationId);
    } catch (error) {
      this.logger.warn(`could not announce the change of ${applicationId}: ${(error as Error).message}`);
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
