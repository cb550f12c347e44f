import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { DeployJobProducer, redisConnection } from '@slipway/messaging';
import { DeploymentsRepository, asApplicationId, asDeploymentId } from '@slipway/platform-data';
import type { Redis } from 'ioredis';
import { WORKER_CONFIG, type WorkerConfig } from '../config.js';

export interface ReconcileReport {
  ran: boolean;
  requeued: string[];
  failed: string[];
}

/** A row younger than this may simply not be enqueued yet (the gateway commits, then enqueues). */
const ENQUEUE_GRACE_MS = 5_000;

/**
 * Makes the database the source of truth: re-enqueues active deployments Redis lost and fails
 * those past their deadline or whose job failed. Runs on every worker; a Redis lock lets one
 * run at a time, and the row updates are conditional, so overlapping runs are harmless.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('reconciler');
  private timer?: NodeJS.Timeout;
  private redis?: Redis;
  private producer?: DeployJobProducer;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    private readonly deployments: DeploymentsRepository,
  ) {}

  onApplicationBootstrap(): void {
    // Waits through a Redis outage (like the worker's own connection): a pass resumes when it is back.
    this.redis = redisConnection(this.config.REDIS_URL, 'queue-worker');
    this.producer = new DeployJobProducer(this.redis, this.config.QUEUE_PREFIX);
    this.timer = setInterval(() => {
      this.reconcile().catch((error: unknown) => this.logger.error(`reconcile failed: ${(error as Error).message}`));
    }, this.config.RECONCILE_INTERVAL_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.producer?.close();
    this.redis?.disconnect();
  }

  async reconcile(now = new Date()): Promise<ReconcileReport> {
    const report: ReconcileReport = { ran: false, requeued: [], failed: [] };
    const lockKey = `${this.config.QUEUE_PREFIX}:reconciler:lock`;
    const token = randomBytes(8).toString('hex');
    const acquired = await this.redis!.set(lockKey, token, 'PX', Math.max(this.config.RECONCILE_INTERVAL_MS, 5_000), 'NX');
    if (!acquired) return report;
    report.ran = true;
    try {
      for (const row of await this.deployments.active()) {
        const ids = [asApplicationId(row.applicationId), asDeploymentId(row.id)] as const;
        // A queued row's deadline says by when it must start (DEPLOY_DEADLINE_MINUTES, gateway).
        if (row.status === 'queued' && row.deadlineAt && row.deadlineAt < now) {
          const waited = Math.round((now.getTime() - row.createdAt.getTime()) / 60_000);
          if (
            await this.deployments.failActive(
              ...ids,
              {
                code: 'queue_timeout',
                message: `the deployment waited ${waited} min in the build queue without being started (its deadline was ${row.deadlineAt.toISOString()}); nothing of it ran`,
                step: null,
              },
              { status: 'queued', deadlineBefore: now },
            )
          )
            report.failed.push(row.id);
          continue;
        }
        // A running row's deadline counts from its build's start (DEPLOY_TIMEOUT_MS). Its worker stops
        // it at that moment; this is the backstop for a worker that could not (a lost lease, a hung
        // process), and the failed row then stops that worker's build (its attempt watch).
        if (row.status !== 'queued' && row.deadlineAt && row.deadlineAt.getTime() + this.config.JOB_LOCK_MS * 2 < now.getTime()) {
          if (
            await this.deployments.failActive(
              ...ids,
              {
                code: 'deadline_exceeded',
                message: `the deployment did not finish by its deadline (${row.deadlineAt.toISOString()}, DEPLOY_TIMEOUT_MS after its build started)`,
                step: null,
              },
              { status: 'running', deadlineBefore: new Date(now.getTime() - this.config.JOB_LOCK_MS * 2) },
            )
          )
            report.failed.push(row.id);
          continue;
        }
        const payload = { deploymentId: row.id, applicationId: row.applicationId };
        const job = await this.producer!.job(payload);
        const state = job ? await job.getState() : 'missing';
        const quietFor = now.getTime() - row.updatedAt.getTime();
        if (state === 'failed') {
          const reason = job?.failedReason ?? 'unknown';
          if (
            await this.deployments.failActive(asApplicationId(row.applicationId), asDeploymentId(row.id), {
              code: /stalled/i.test(reason) ? 'worker_lost' : 'internal_error',
              message: `the deploy job failed: ${reason}`,
              step: null,
            })
          )
            report.failed.push(row.id);
        } else if ((state === 'missing' || state === 'completed') && quietFor > (row.status === 'queued' ? ENQUEUE_GRACE_MS : this.config.JOB_LOCK_MS * 2)) {
          await job?.remove().catch(() => undefined);
          await this.producer!.enqueue(payload);
          report.requeued.push(row.id);
        }
      }
    } finally {
      // Only our own lock is released (compare-and-delete).
      await this.redis!.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, lockKey, token);
    }
    if (report.requeued.length || report.failed.length) this.logger.log(`re-enqueued ${report.requeued.length}, failed ${report.failed.length}`);
    return report;
  }
}
