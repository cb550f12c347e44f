import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import pg from 'pg';
import {
  redisConnection,
  sessionCacheChannel,
  sessionCacheReplicaChannel,
  type Channel,
  type SessionCacheAck,
  type SessionCacheMessage,
} from '@slipway/messaging';
import { AUTH_CONFIG, type AuthConfig } from '../config.js';
import { REDIS } from '../platform/index.js';
import { TENANT_CONNECTION_BUDGET, type Tenant, type TenantConnectionBudget } from '../tenants/index.js';
import type { OrganizationClaims } from '../tokens/index.js';
import type { UserRow } from '../users/index.js';
import type { SessionRow } from './sessions.repository.js';

/** What service_auth's triggers NOTIFY on every UPDATE/DELETE of a session or user (libs/sign-in-core migration). */
export const SERVICE_AUTH_CHANGED_CHANNEL = 'service_auth_changed';

export interface CachedSession {
  readonly tenantId: string;
  readonly session: SessionRow;
  readonly user: UserRow;
  /** Date.now() after which the entry is not served (≤ TTL, ≤ the session's end). */
  readonly until: number;
  /** A JWT for this session's user, reused until `until` (see TokensService.signReusable). */
  jwt?: { token: string; until: number; epoch: number };
  /** The session's active organization with the user's role there (null: none, or not a member), read once for the JWT's claims. */
  organization?: OrganizationClaims | null;
}

interface Waiter {
  acked: Set<string>;
  receivers: number;
  expected: string[];
  done: () => void;
}

/**
 * Per-process LRU of sessions with their user, keyed by tenant + SHA-256 of the token, so
 * get-session and /token skip the database. The database stays authoritative:
 *
 * - Our own writes (sign-out, revocations, password change/reset, update-user, verify-email,
 *   session refresh) change the database first, then `invalidate()`: evict locally, PUBLISH on
 *   `{prefix}session-cache:invalidate`, and wait until every replica acknowledged having evicted
 *   (or the fence time passed, after which no replica that missed it may serve from its cache).
 * - Anyone else's writes (the application's own code on its database, psql): service_auth
 *   triggers NOTIFY `service_auth_changed` with the user ids; each replica LISTENs on every
 *   tenant database it caches for, and does not use its cache for a tenant until LISTEN is up.
 * - Fence: every caching replica publishes a heartbeat through Redis every fence/5 ms and uses
 *   its cache only while its latest heartbeat came back within AUTH_SESSION_CACHE_FENCE_MS. Redis
 *   delivers messages in order, so a replica with a fresh heartbeat has received every
 *   invalidation published more than the fence time ago; a broken or lagging subscription turns
 *   the cache off by itself. A dropped subscriber or LISTEN connection also clears the cache.
 * - Read/insert race: a read records `generation` before its database query and inserts only if
 *   no eviction happened meanwhile.
 */
@Injectable()
export class SessionCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('SessionCache');
  private readonly entries = new Map<string, CachedSession>();
  private readonly byUser = new Map<string, Set<string>>();
  private readonly replicaId = randomUUID();
  private readonly channel: Channel<SessionCacheMessage>;
  private readonly ownChannel: Channel<SessionCacheAck>;
  private readonly waiters = new Map<string, Waiter>();
  /** Replicas heard from (heartbeats), with performance.now() of the last one. */
  private readonly peers = new Map<string, number>();
  private readonly listeners: TenantChangeListeners;
  private subscriber: Redis | undefined;
  private subscribed = false;
  private lastBeat = -Infinity;
  private beatTimer: NodeJS.Timeout | undefined;
  /** Bumped by every eviction: reads started before it do not insert what they read. */
  generation = 0;
  readonly stats = { hits: 0, misses: 0, inserts: 0, evictions: 0, acksTimedOut: 0 };

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(TENANT_CONNECTION_BUDGET) budget: TenantConnectionBudget,
  ) {
    this.channel = sessionCacheChannel(config.AUTH_REDIS_PREFIX);
    this.ownChannel = sessionCacheReplicaChannel(config.AUTH_REDIS_PREFIX, this.replicaId);
    // One LISTEN connection per tenant, as many tenants as the connection budget has pools for.
    this.listeners = new TenantChangeListeners(budget.pools, this.logger, {
      changed: (tenantId, payload) => (payload === '*' ? this.clearTenant(tenantId) : this.evictUsers(tenantId, payload.split(','))),
      lost: (tenantId) => this.clearTenant(tenantId),
    });
  }

  get enabled(): boolean {
    return this.config.AUTH_SESSION_CACHE_SIZE > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  async onModuleInit(): Promise<void> {
    // Every replica subscribes (and acknowledges), caching or not, so writers know whom to wait for.
    const subscriber = redisConnection(this.config.REDIS_URL, 'subscriber', { lazyConnect: true });
    this.subscriber = subscriber;
    subscriber.on('error', (error: Error) => this.logger.warn(`session cache subscription: ${error.message}`));
    subscriber.on('message', (channel: string, message: string) => this.onMessage(channel, message));
    subscriber.on('close', () => this.unsubscribed());
    subscriber.on('ready', () => void this.subscribe());
    subscriber.connect().catch((error: Error) => this.logger.warn(`session cache cannot subscribe yet: ${error.message}`));
    if (this.enabled) {
      const interval = Math.max(20, Math.floor(this.config.AUTH_SESSION_CACHE_FENCE_MS / 5));
      this.beatTimer = setInterval(() => this.beat(), interval);
      this.beatTimer.unref();
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.beatTimer);
    for (const waiter of this.waiters.values()) waiter.done();
    this.subscriber?.disconnect();
    await this.listeners.closeAll();
  }

  /** The cached session for this token hash, if the cache may be used for this tenant right now. */
  get(tenant: Tenant, tokenHash: string): CachedSession | undefined {
    if (!this.usable() || !this.listeners.ready(tenant)) return undefined;
    const key = `${tenant.applicationId} ${tokenHash}`;
    const entry = this.entries.get(key);
    if (!entry) {
      this.stats.misses++;
      return undefined;
    }
    if (entry.until <= Date.now()) {
      this.remove(key, entry);
      this.stats.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.stats.hits++;
    return entry;
  }

  /** Caches what a read found, unless anything was evicted since it read `generation` (then it may be stale). */
  put(tenant: Tenant, tokenHash: string, found: { session: SessionRow; user: UserRow }, generation: number, endsAt: number): CachedSession | undefined {
    if (generation !== this.generation || !this.usable() || !this.listeners.ready(tenant)) return undefined;
    const until = Math.min(Date.now() + this.config.AUTH_SESSION_CACHE_TTL_SECONDS * 1000, endsAt);
    if (until <= Date.now()) return undefined;
    const key = `${tenant.applicationId} ${tokenHash}`;
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    const entry: CachedSession = { tenantId: tenant.applicationId, session: found.session, user: found.user, until };
    this.entries.set(key, entry);
    const userKey = `${tenant.applicationId} ${found.user.id}`;
    let keys = this.byUser.get(userKey);
    if (!keys) this.byUser.set(userKey, (keys = new Set()));
    keys.add(key);
    this.stats.inserts++;
    while (this.entries.size > this.config.AUTH_SESSION_CACHE_SIZE) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.remove(oldestKey, oldest);
    }
    return entry;
  }

  /**
   * After a write to sessions or users (the database first): evicts these users' sessions here
   * and on every replica. Resolves once every replica acknowledged, or after the fence time
   * (AUTH_SESSION_CACHE_FENCE_MS + 100 ms) — by then a replica that has not received the message
   * has stopped using its cache. Rejects only when Redis refused the PUBLISH for that long.
   */
  async invalidate(tenant: Tenant, userIds: string[]): Promise<void> {
    this.evictUsers(tenant.applicationId, userIds);
    const messageId = randomUUID();
    const fenceMs = this.config.AUTH_SESSION_CACHE_FENCE_MS + 100;
    const started = performance.now();
    // Replicas heard within the fence time may still serve from their cache: wait for them too.
    const expected = [...this.peers].filter(([, at]) => started - at <= this.config.AUTH_SESSION_CACHE_FENCE_MS).map(([id]) => id);
    let resolveDone!: () => void;
    const allAcked = new Promise<void>((resolve) => (resolveDone = resolve));
    const waiter: Waiter = { acked: new Set(), receivers: Infinity, expected, done: resolveDone };
    this.waiters.set(messageId, waiter);
    try {
      const message = this.channel.encode({ kind: 'invalidate', replicaId: this.replicaId, messageId, tenantId: tenant.applicationId, userIds });
      for (;;) {
        try {
          waiter.receivers = await this.redis.publish(this.channel.name, message);
          break;
        } catch (error) {
          if (performance.now() - started > fenceMs)
            throw new Error(`session cache invalidation could not be published: ${(error as Error).message}`, { cause: error });
          await sleep(100);
        }
      }
      this.checkWaiter(waiter);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, fenceMs - (performance.now() - started)))));
      const late = await Promise.race([allAcked.then(() => false), timedOut]);
      clearTimeout(timer);
      if (late) {
        this.stats.acksTimedOut++;
        this.logger.warn(
          `session cache invalidation: ${waiter.acked.size} of ${waiter.receivers} replicas acknowledged within ${fenceMs} ms; the others are past their fence`,
        );
      }
    } finally {
      this.waiters.delete(messageId);
    }
  }

  /** Drops a session read found expired (other replicas cap their entries at the same end). */
  forgetLocally(tenant: Tenant, tokenHash: string): void {
    const key = `${tenant.applicationId} ${tokenHash}`;
    const entry = this.entries.get(key);
    if (entry) this.remove(key, entry);
    this.generation++;
  }

  /** Whether this replica serves from its cache at all right now (subscribed, heartbeat fresh). */
  usable(): boolean {
    return this.enabled && this.subscribed && performance.now() - this.lastBeat <= this.config.AUTH_SESSION_CACHE_FENCE_MS;
  }

  clear(): void {
    this.entries.clear();
    this.byUser.clear();
    this.generation++;
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber!.subscribe(this.channel.name, this.ownChannel.name);
      // Messages sent while we were away are lost: start empty.
      this.clear();
      this.subscribed = true;
      if (this.enabled) this.beat();
    } catch (error) {
      this.logger.warn(`session cache subscribe failed: ${(error as Error).message}`);
    }
  }

  private unsubscribed(): void {
    this.subscribed = false;
    this.clear();
  }

  private beat(): void {
    this.redis.publish(this.channel.name, this.channel.encode({ kind: 'beat', replicaId: this.replicaId, sentAt: performance.now() })).catch(() => undefined);
  }

  private onMessage(channel: string, message: string): void {
    if (channel === this.ownChannel.name) {
      const ack = decodeOrUndefined(this.ownChannel, message);
      const waiter = ack && this.waiters.get(ack.messageId);
      if (ack && waiter) {
        waiter.acked.add(ack.replicaId);
        this.checkWaiter(waiter);
      }
      return;
    }
    const parsed = decodeOrUndefined(this.channel, message);
    if (!parsed) return;
    if (parsed.kind === 'beat') {
      this.peers.set(parsed.replicaId, performance.now());
      if (parsed.replicaId === this.replicaId) this.lastBeat = Math.max(this.lastBeat, parsed.sentAt);
      return;
    }
    if (parsed.replicaId !== this.replicaId) this.evictUsers(parsed.tenantId, parsed.userIds);
    const sender = sessionCacheReplicaChannel(this.config.AUTH_REDIS_PREFIX, parsed.replicaId);
    this.redis.publish(sender.name, sender.encode({ messageId: parsed.messageId, replicaId: this.replicaId })).catch(() => undefined);
  }

  private checkWaiter(waiter: Waiter): void {
    if (waiter.acked.size >= waiter.receivers && waiter.expected.every((id) => waiter.acked.has(id))) waiter.done();
  }

  private evictUsers(tenantId: string, userIds: string[]): void {
    this.generation++;
    for (const userId of userIds) {
      const keys = this.byUser.get(`${tenantId} ${userId}`);
      if (!keys) continue;
      for (const key of [...keys]) {
        const entry = this.entries.get(key);
        if (entry) this.remove(key, entry);
      }
    }
  }

  private clearTenant(tenantId: string): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (entry.tenantId === tenantId) this.remove(key, entry);
  }

  private remove(key: string, entry: CachedSession): void {
    this.entries.delete(key);
    this.stats.evictions++;
    const userKey = `${entry.tenantId} ${entry.user.id}`;
    const keys = this.byUser.get(userKey);
    if (keys) {
      keys.delete(key);
      if (!keys.size) this.byUser.delete(userKey);
    }
  }
}

/**
 * One LISTEN connection per tenant database the cache is used for (at most `max`, least recently
 * used closed first). A tenant's cache is used only while its listener is up.
 */
class TenantChangeListeners {
  private readonly listeners = new Map<string, { url: string; client: pg.Client; ready: boolean }>();
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly logger: Logger,
    private readonly on: { changed: (tenantId: string, payload: string) => void; lost: (tenantId: string) => void },
  ) {}

  ready(tenant: Tenant): boolean {
    const listener = this.listeners.get(tenant.applicationId);
    if (listener && listener.url === tenant.databaseUrl) {
      if (listener.ready && this.listeners.size > 1) {
        this.listeners.delete(tenant.applicationId);
        this.listeners.set(tenant.applicationId, listener);
      }
      return listener.ready;
    }
    if (listener) this.close(tenant.applicationId);
    if (Date.now() - (this.failedAt.get(tenant.applicationId) ?? 0) < 1000) return false;
    this.start(tenant);
    return false;
  }

  private start(tenant: Tenant): void {
    const id = tenant.applicationId;
    const client = new pg.Client({ connectionString: tenant.databaseUrl, application_name: 'slipway-auth-session-cache' });
    const listener = { url: tenant.databaseUrl, client, ready: false };
    this.listeners.set(id, listener);
    const lost = (why: string) => {
      if (this.listeners.get(id) !== listener) return;
      this.listeners.delete(id);
      this.failedAt.set(id, Date.now());
      if (listener.ready) this.logger.warn(`change notifications of ${tenant.slug} lost (${why}); its cached sessions are dropped`);
      listener.ready = false;
      this.on.lost(id);
      client.end().catch(() => undefined);
    };
    client.on('notification', (n) => this.on.changed(id, n.payload ?? '*'));
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection ended'));
    client
      .connect()
      .then(() => client.query(`LISTEN ${SERVICE_AUTH_CHANGED_CHANNEL}`))
      .then(
        () => {
          if (this.listeners.get(id) === listener) listener.ready = true;
        },
        (error: Error) => lost(error.message),
      );
    while (this.listeners.size > this.max) this.close(this.listeners.keys().next().value!);
  }

  close(tenantId: string): void {
    const listener = this.listeners.get(tenantId);
    if (!listener) return;
    this.listeners.delete(tenantId);
    listener.ready = false;
    this.on.lost(tenantId);
    listener.client.end().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    const all = [...this.listeners.values()];
    this.listeners.clear();
    await Promise.all(all.map((l) => l.client.end().catch(() => undefined)));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message that is not the channel's (another version's, a stray publish) is dropped. */
function decodeOrUndefined<Payload>(channel: Channel<Payload>, message: string): Payload | undefined {
  try {
    return channel.decode(message);
  } catch {
    return undefined;
  }
}
