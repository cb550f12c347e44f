/**
 * The Redis pub/sub channels the processes talk over: one naming rule (`channelName`), and each
 * channel with its payload type, JSON on the wire. A publisher and its subscribers (often in
 * different apps) take the channel from here, so its name and payload change in one place.
 * Messages say what changed (ids), never a secret; a subscriber reloads from the database.
 */

/** A channel: its name, and how its payload goes onto the wire and comes back. */
export interface Channel<Payload> {
  readonly name: string;
  encode(payload: Payload): string;
  /** Throws on a message that is not this channel's payload (a subscriber logs and drops it). */
  decode(message: string): Payload;
}

/**
 * The one naming rule: `<prefix>:<part>:<part>…`. A prefix is the process's Redis prefix
 * (`QUEUE_PREFIX`, or the sign-in service's `AUTH_REDIS_PREFIX`); a trailing `:` on it is dropped.
 */
export function channelName(prefix: string, ...parts: string[]): string {
  return [prefix.replace(/:+$/, ''), ...parts].join(':');
}

function jsonChannel<Payload>(name: string, check: (value: unknown) => value is Payload): Channel<Payload> {
  return {
    name,
    encode: (payload) => JSON.stringify(payload),
    decode: (message) => {
      const value: unknown = JSON.parse(message);
      if (!check(value)) throw new Error(`not a message of channel ${name}: ${message.slice(0, 200)}`);
      return value;
    },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';

/** Routes channel: reload this application's route (or everything). */
export interface RoutesMessage {
  applicationId?: string;
  /** Set when a domain changed; the edge reloads its whole table. */
  all?: boolean;
}

/** Build worker, gateway → every edge replica: an application's routes changed. */
export function routesChannel(prefix: string): Channel<RoutesMessage> {
  return jsonChannel(
    channelName(prefix, 'routes'),
    (v): v is RoutesMessage => isObject(v) && (v['applicationId'] === undefined || isString(v['applicationId'])),
  );
}

/** Tenant-changed channel: a sign-in service's configuration changed (application id, or slug). */
export interface TenantChangedMessage {
  applicationId: string;
}

/**
 * The Redis prefix the sign-in service runs under by default (`AUTH_REDIS_PREFIX`). The gateway
 * and the build worker announce tenant changes under it: they do not share a configured prefix
 * with the sign-in service.
 */
export const SIGN_IN_REDIS_PREFIX = 'slipway:auth:';

/**
 * Gateway, build worker → every sign-in replica: drop the cached copy of this tenant. Before the
 * catalogue the payload was the bare application id; `decode` still reads one.
 */
export function tenantChangedChannel(prefix: string = SIGN_IN_REDIS_PREFIX): Channel<TenantChangedMessage> {
  const channel = jsonChannel(channelName(prefix, 'tenant-changed'), (v): v is TenantChangedMessage => isObject(v) && isString(v['applicationId']));
  return { ...channel, decode: (message) => (message.startsWith('{') ? channel.decode(message) : { applicationId: message }) };
}

/** Sign-in replicas among themselves: an eviction to apply and acknowledge, or a replica's heartbeat (the fence). */
export type SessionCacheMessage =
  { kind: 'invalidate'; replicaId: string; messageId: string; tenantId: string; userIds: string[] } | { kind: 'beat'; replicaId: string; sentAt: number };

export function sessionCacheChannel(authPrefix: string): Channel<SessionCacheMessage> {
  return jsonChannel(
    channelName(authPrefix, 'session-cache', 'invalidate'),
    (v): v is SessionCacheMessage =>
      isObject(v) &&
      isString(v['replicaId']) &&
      (v['kind'] === 'beat'
        ? typeof v['sentAt'] === 'number'
        : v['kind'] === 'invalidate' && isString(v['messageId']) && isString(v['tenantId']) && Array.isArray(v['userIds'])),
  );
}

/** One sign-in replica's own channel: a replica acknowledges having applied one of its evictions. */
export interface SessionCacheAck {
  messageId: string;
  replicaId: string;
}

export function sessionCacheReplicaChannel(authPrefix: string, replicaId: string): Channel<SessionCacheAck> {
  return jsonChannel(
    channelName(authPrefix, 'session-cache', 'replica', replicaId),
    (v): v is SessionCacheAck => isObject(v) && isString(v['messageId']) && isString(v['replicaId']),
  );
}

/** One batch of a deployment's live build output (whole lines). `seq` grows within an attempt. */
export interface BuildLogChunk {
  attempt: number;
  seq: number;
  step: string;
  text: string;
}

/**
 * Build worker → owners' API: a deployment's install and build output as it is produced, made
 * plain and redacted by the worker (never raw text), one `BuildLogChunk` per message; the same
 * chunks are kept in the list `buildLogList` (capped, expiring) for a follower that comes late.
 */
export function buildLogChannel(prefix: string, deploymentId: string): Channel<BuildLogChunk> {
  return jsonChannel(
    channelName(prefix, 'build-log', deploymentId),
    (v): v is BuildLogChunk => isObject(v) && typeof v['attempt'] === 'number' && typeof v['seq'] === 'number' && isString(v['text']),
  );
}

/** The list (not a channel) that keeps a deployment's chunks, encoded like its channel's. */
export function buildLogList(prefix: string, deploymentId: string): string {
  return channelName(prefix, 'build-log', deploymentId, 'lines');
}
