import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { redisConnection, tenantChangedChannel } from '@slipway/messaging';
import type { Redis } from 'ioredis';
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
    this.redis = redisConnection(config.REDIS_URL, 'publisher');
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  async publish(applicationId: string): Promise<void> {
    try {
      const channel = tenantChangedChannel();
      await this.redis.publish(channel.name, channel.encode({ applicationId }));
    } catch (error) {
      this.logger.warn(`could not announce the change of ${applicationId}: ${(error as Error).message}`);
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
