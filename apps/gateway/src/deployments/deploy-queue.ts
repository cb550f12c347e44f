import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { QUEUES, assertIdsOnly, jobIdFor, type JobPayloads } from '@slipway/queue';
import { ApiException } from '@slipway/server';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';

const PING_TIMEOUT_MS = 1000;
const ENQUEUE_TIMEOUT_MS = 3000;

/**
 * Producer of `deploy` jobs. The connection never queues commands while Redis is away
 * (`enableOfflineQueue: false`), so a request fails fast with 503 instead of hanging.
 */
@Injectable()
export class DeployQueue implements OnModuleDestroy {
  private readonly logger = new Logger('DeployQueue');
  private readonly redis: Redis;
  private readonly queue: Queue;
  private lastError = '';

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.redis.on('error', (error: Error) => this.noteError(error));
    this.queue = new Queue(QUEUES.deploy.name, { connection: this.redis, prefix: config.QUEUE_PREFIX });
    this.queue.on('error', (error: Error) => this.noteError(error));
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

  async enqueue(payload: JobPayloads['deploy']): Promise<void> {
    assertIdsOnly({ ...payload });
    await withTimeout(this.queue.add('deploy', payload, { jobId: jobIdFor('deploy', payload), removeOnComplete: 1000, removeOnFail: 5000 }), ENQUEUE_TIMEOUT_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close().catch(() => undefined);
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
