import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { hostname } from 'node:os';
import { QUEUES, WORKER_HEARTBEAT_MS, WORKER_HEARTBEAT_TTL_MS, assertIdsOnly, redisConnection, workerHeartbeatKey, type JobPayloads } from '@slipway/messaging';
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';
import { DeployPipelineService, type DeployOutcome } from './deploy-pipeline.service.js';

type DeployJob = Job<JobPayloads['deploy'], DeployOutcome>;

/**
 * The `deploy` queue's consumer. At-least-once: a worker that dies stops renewing its job lock,
 * BullMQ's stalled check hands the job to another worker, and the attempt fence in the database
 * keeps the dead attempt from writing anything afterwards. Each of its `WORKER_CONCURRENCY` slots
 * starts a job only when it is its owner's turn (the fair pick in Postgres, DeploymentsRepository
 * `queue`); otherwise the job waits `QUEUE_TURN_RETRY_MS` in BullMQ's delayed set and the slot
 * takes the next one.
 */
@Injectable()
export class DeployWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('deploy-worker');
  private worker?: Worker<JobPayloads['deploy'], DeployOutcome>;
  private connection?: Redis;
  /** Its own small connection: the worker's may be blocked waiting for a job. */
  private heartbeatRedis?: Redis;
  private heartbeat?: NodeJS.Timeout;
  private readonly heartbeatKey: string;
  private readonly shutdown = new AbortController();
  private readonly handlers: Record<(typeof QUEUES.deploy.jobs)[number], (job: DeployJob, token?: string) => Promise<DeployOutcome>> = {
    deploy: (job, token) => this.deploy(job, token),
  };

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly pipeline: DeployPipelineService,
  ) {
    this.heartbeatKey = workerHeartbeatKey(config.QUEUE_PREFIX, `${hostname()}:${process.pid}`);
  }

  onApplicationBootstrap(): void {
    for (const name of QUEUES.deploy.jobs) if (!this.handlers[name]) throw new Error(`no handler for job ${name}`);
    this.connection = redisConnection(this.config.REDIS_URL, 'queue-worker');
    this.worker = new Worker(QUEUES.deploy.name, (job, token) => this.dispatch(job, token), {
      connection: this.connection,
      prefix: this.config.QUEUE_PREFIX,
      concurrency: this.config.WORKER_CONCURRENCY,
      lockDuration: this.config.JOB_LOCK_MS,
      stalledInterval: this.config.STALLED_INTERVAL_MS,
      maxStalledCount: 1,
      removeOnComplete: { age: 24 * 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    });
    this.worker.on('error', (error) => this.logger.error(`queue error: ${error.message}`));
    this.worker.on('stalled', (jobId) => this.logger.warn(`job ${jobId} stalled (its worker stopped); it will be retried`));
    this.startHeartbeat();
    this.logger.log(
      `consuming queue ${this.config.QUEUE_PREFIX}:${QUEUES.deploy.name} (concurrency ${this.config.WORKER_CONCURRENCY}: build slots; at most ${this.config.BUILDS_PER_OWNER} per owner; order ${this.config.DEPLOY_QUEUE_ORDER})`,
    );
  }

  /** While the worker runs, a key with a TTL says so (the gateway's health and the dashboard read it). */
  private startHeartbeat(): void {
    this.heartbeatRedis = redisConnection(this.config.REDIS_URL, 'heartbeat');
    this.heartbeatRedis.on('error', () => undefined);
    const beat = () => {
      if (!this.worker?.isRunning() || this.heartbeatRedis?.status !== 'ready') return;
      const value = JSON.stringify({ pid: process.pid, concurrency: this.config.WORKER_CONCURRENCY, at: new Date().toISOString() });
      this.heartbeatRedis.set(this.heartbeatKey, value, 'PX', WORKER_HEARTBEAT_TTL_MS).catch(() => undefined);
    };
    this.heartbeatRedis.on('ready', beat);
    this.heartbeat = setInterval(beat, WORKER_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private dispatch(job: DeployJob, token?: string): Promise<DeployOutcome> {
    const handler = this.handlers[job.name as keyof typeof this.handlers];
    if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
    return handler(job, token);
  }

  private async deploy(job: DeployJob, token?: string): Promise<DeployOutcome> {
    assertIdsOnly(job.data);
    const outcome = await this.pipeline.run({ deploymentId: job.data.deploymentId, applicationId: job.data.applicationId }, this.shutdown.signal);
    if (outcome === 'handed-back') {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (outcome === 'not-its-turn') {
      // Back to the queue (behind what waits there) for a moment; the slot takes the next job,
      // which is how another owner's deploy gets it. Not an attempt: nothing of it ran.
      await job.moveToDelayed(Date.now() + this.config.QUEUE_TURN_RETRY_MS, token);
      throw new DelayedError();
    }
    return outcome;
  }

  /** SIGTERM: finish the current job, or after the grace period stop it and hand it back. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.heartbeatRedis?.del(this.heartbeatKey).catch(() => undefined);
    this.heartbeatRedis?.disconnect();
    if (!this.worker) return;
    const timer = setTimeout(() => this.shutdown.abort(), this.config.SHUTDOWN_GRACE_MS);
    try {
      await this.worker.close();
    } finally {
      clearTimeout(timer);
      this.connection?.disconnect();
    }
  }
}
