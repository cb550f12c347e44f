import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { DeploymentsRepository, asApplicationId, asReleaseId } from '@slipway/platform-data';
import { ReleaseNotFoundError, makeReleaseLive, publishRoutesChanged } from '@slipway/runtime';
import { ApiException } from '@slipway/server';
import { redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

/** Tells every edge replica that an application's routes changed (domains, rollback). */
@Injectable()
export class RoutesPublisher implements OnModuleDestroy {
  private readonly logger = new Logger('Routes');
  private readonly redis: Redis;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deployments: DeploymentsRepository,
  ) {
    this.redis = redisConnection(config.REDIS_URL, 'publisher');
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  /** Best effort: an edge that misses it reloads every route when it reconnects to Redis. */
  async routesChanged(applicationId: string): Promise<void> {
    try {
      await publishRoutesChanged(this.redis, this.config.QUEUE_PREFIX, { applicationId });
    } catch (error) {
      this.logger.warn(`could not announce new routes of ${applicationId}: ${(error as Error).message}`);
    }
  }

  /** Rollback (or forward): an earlier release of the application becomes live, without a rebuild. */
  async makeLive(applicationId: string, releaseId: string): Promise<void> {
    try {
      await makeReleaseLive(this.deployments, this.redis, this.config.QUEUE_PREFIX, asApplicationId(applicationId), asReleaseId(releaseId));
    } catch (error) {
      if (error instanceof ReleaseNotFoundError) throw new ApiException('not_found', 'This application has no such release.');
      throw error;
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
