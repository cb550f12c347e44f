/**
 * The one catalogue of BullMQ queues, job names and payloads. Payloads carry ids only, never
 * secrets. A worker must register a handler for every job name of the queues it consumes.
 */
export const QUEUES = {
  deploy: { name: 'deploy', jobs: ['deploy'] },
} as const;

export type QueueName = keyof typeof QUEUES;

export interface JobPayloads {
  deploy: { deploymentId: string; applicationId: string };
}

export type JobName = keyof JobPayloads;

/** Deterministic job ids: the same deployment is never enqueued twice. */
export function jobIdFor(name: JobName, payload: JobPayloads[JobName]): string {
  switch (name) {
    case 'deploy':
      return payload.deploymentId;
  }
}

/** Redis key prefix for BullMQ; tests give each file its own. */
export const DEFAULT_QUEUE_PREFIX = 'slipway';

const ID_ONLY = /^[A-Za-z0-9_-]{1,64}$/;

/** Refuses payloads that carry anything but identifiers (a guard against secrets in Redis). */
export function assertIdsOnly(payload: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(payload)) {
    if (typeof value !== 'string' || !ID_ONLY.test(value)) {
      throw new Error(`job payload field ${key} must be an identifier`);
    }
  }
}
