import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { publishRoutesChanged, redisConnection, type RoutesMessage } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** Tells every edge replica that an application's routes changed (domains, previews, a release made live), on the gateway's publisher connection. */
@Injectable()
export class RoutesPublisher implements OnModuleDestroy {
  private readonly logger = new Logger('Routes');
  private readonly redis: Redis;

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.redis = redisConnection(config.REDIS_URL, 'publisher');
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  /** Best effort: an edge that misses it reloads every route when it reconnects to Redis. */
  async routesChanged(applicationId: string): Promise<void> {
    try {
      await this.announce({ applicationId });
    } catch (error) {
      this.logger.warn(`could not announce new routes of ${applicationId}: ${(error as Error).message}`);
    }
  }

  /** Rejects when Redis does (a release made live: deployments/release-go-live.service.ts). */
  async announce(message: RoutesMessage): Promise<void> {
    await publishRoutesChanged(this.redis, this.config.QUEUE_PREFIX, message);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
