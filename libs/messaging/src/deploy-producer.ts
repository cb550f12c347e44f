import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { QUEUES, assertIdsOnly, jobIdFor, type JobPayloads } from './queues.js';

export type DeployPayload = JobPayloads['deploy'];

/** How long finished deploy jobs are kept (by count) for the reconciler and for debugging. */
export const DEPLOY_JOB_OPTIONS = { removeOnComplete: 1000, removeOnFail: 5000 } as const;

/**
 * The one producer of `deploy` jobs: the gateway enqueues a deployment it accepted, the build
 * worker's reconciler re-enqueues one Redis lost. Same job name, job id (the deployment's: the
 * same deployment is never queued twice) and retention, whoever enqueues. The connection is the
 * caller's (its role decides whether an enqueue fails fast or waits through an outage) and
 * stays open after `close()`.
 */
export class DeployJobProducer {
  private readonly queue: Queue<DeployPayload>;

  constructor(connection: Redis, prefix: string) {
    this.queue = new Queue<DeployPayload>(QUEUES.deploy.name, { connection, prefix });
  }

  /** Listens to the queue's errors (its connection's included); without a listener they are thrown away. */
  onError(listener: (error: Error) => void): void {
    this.queue.on('error', listener);
  }

  async enqueue(payload: DeployPayload): Promise<void> {
    assertIdsOnly({ ...payload });
    await this.queue.add('deploy', payload, { jobId: jobIdFor('deploy', payload), ...DEPLOY_JOB_OPTIONS });
  }

  /** The deployment's job, if Redis still holds it. */
  async job(payload: DeployPayload): Promise<Job<DeployPayload> | undefined> {
    return (await this.queue.getJob(jobIdFor('deploy', payload))) ?? undefined;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
