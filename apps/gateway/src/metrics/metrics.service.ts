import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppMetrics, asApplicationId, type MetricsSeries } from '@slipway/platform-data';
import { ApiException } from '@slipway/service-kit';
import { redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

const RANGES = ['hour', 'day'] as const;

/** An application's metrics as the edges stored them (AppMetrics, Redis), for the owners' API. */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  private readonly logger = new Logger('Metrics');
  private readonly redis: Redis;
  private readonly metrics: AppMetrics;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.redis = redisConnection(config.REDIS_URL, 'command');
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
    this.metrics = new AppMetrics(this.redis, config.QUEUE_PREFIX);
  }

  /** The last hour by the minute (default) or the last day by 10 minutes. */
  series(applicationId: string, range: unknown): Promise<MetricsSeries> {
    const chosen = range === undefined ? 'hour' : RANGES.find((r) => r === range);
    if (!chosen) throw new ApiException('bad_request', `range must be one of: ${RANGES.join(', ')}`);
    return this.metrics.series(asApplicationId(applicationId), chosen);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
