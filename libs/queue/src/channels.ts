/**
 * The Redis pub/sub channels the processes talk over, named once like the queues beside them.
 * Messages say what changed (ids), never a secret; a subscriber reloads from the database.
 */

/** Build worker, gateway → every edge replica: reload one application's route, or all (`RoutesMessage`, libs/runtime). */
export function routesChannel(prefix: string): string {
  return `${prefix}:routes`;
}

/** Gateway, build worker → every sign-in replica: a tenant's sign-in configuration changed (application id or slug). */
export const TENANT_CHANGED_CHANNEL = 'slipway:auth:tenant-changed';

/** Sign-in replicas among themselves: evictions from the session cache, and the heartbeats that fence it. */
export function sessionCacheChannel(prefix: string): string {
  return `${prefix}session-cache:invalidate`;
}

/** One sign-in replica's own channel: acknowledgements of the evictions it published. */
export function sessionCacheReplicaChannel(prefix: string, replicaId: string): string {
  return `${prefix}session-cache:replica:${replicaId}`;
}

/**
 * Build worker → owners' API: a deployment's install and build output as it is produced, made
 * plain and redacted by the worker (never raw text), one JSON `BuildLogChunk` per message; the
 * same chunks are kept in the list `buildLogList` (capped, expiring) for a follower that comes late.
 */
export function buildLogChannel(prefix: string, deploymentId: string): string {
  return `${prefix}:build-log:${deploymentId}`;
}

export function buildLogList(prefix: string, deploymentId: string): string {
  return `${prefix}:build-log:${deploymentId}:lines`;
}

/** One batch of a deployment's live build output (whole lines). `seq` grows within an attempt. */
export interface BuildLogChunk {
  attempt: number;
  seq: number;
  step: string;
  text: string;
}
