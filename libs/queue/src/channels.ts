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
