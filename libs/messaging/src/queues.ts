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

/** How often a build worker that consumes the deploy queue says so, and how long that lasts. */
export const WORKER_HEARTBEAT_MS = 5_000;
export const WORKER_HEARTBEAT_TTL_MS = 15_000;

/**
 * A consuming build worker keeps this key alive (`PX WORKER_HEARTBEAT_TTL_MS`, renewed every
 * `WORKER_HEARTBEAT_MS`); none left under `workerHeartbeatPattern` means no worker is consuming.
 */
export function workerHeartbeatKey(prefix: string, workerId: string): string {
  return `${prefix}:heartbeat:build-worker:${workerId}`;
}

export function workerHeartbeatPattern(prefix: string): string {
  return `${prefix}:heartbeat:build-worker:*`;
}
