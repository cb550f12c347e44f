import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { DeployJobProducer, redisConnection, type DeployPayload } from '@slipway/messaging';
import { ApiException } from '@slipway/service-kit';
import type { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

const PING_TIMEOUT_MS = 1000;
const ENQUEUE_TIMEOUT_MS = 3000;

/**
 * The gateway's end of the deploy queue (`DeployJobProducer`, @slipway/messaging). Its connection
 * is a `queue-producer`: it never queues commands while Redis is away, so a request fails fast
 * with 503 instead of hanging.
 */
@Injectable()
export class DeployQueue implements OnModuleDestroy {
  private readonly logger = new Logger('DeployQueue');
  private readonly redis: Redis;
  private readonly producer: DeployJobProducer;
  private lastError = '';

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.redis = redisConnection(config.REDIS_URL, 'queue-producer');
    this.redis.on('error', (error: Error) => this.noteError(error));
    this.producer = new DeployJobProducer(this.redis, config.QUEUE_PREFIX);
    this.producer.onError((error: Error) => this.noteError(error));
  }

  /** Throws `unavailable` unless Redis answers right now. */
  async assertReachable(): Promise<void> {
    if (this.redis.status !== 'ready') throw unavailable();
    try {
      await withTimeout(this.redis.ping(), PING_TIMEOUT_MS);
    } catch {
      throw unavailable();
    }
  }

  async enqueue(payload: DeployPayload): Promise<void> {
    await withTimeout(this.producer.enqueue(payload), ENQUEUE_TIMEOUT_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.producer.close().catch(() => undefined);
    this.redis.disconnect();
  }

  private noteError(error: Error): void {
    // Redis being away is reported once per distinct message, not once per reconnect attempt.
    if (error.message === this.lastError) return;
    this.lastError = error.message;
    this.logger.warn(`Redis: ${error.message}`);
  }
}

function unavailable(): ApiException {
  return new ApiException('unavailable', 'The deploy queue (Redis) is not answering; nothing was accepted. Retry shortly.', {}, { 'Retry-After': '5' });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}
