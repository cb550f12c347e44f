import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { BACKOFF_TO_2S, redisConnection } from '@slipway/messaging';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { oneLine } from './dependencies.js';

export interface HealthOptions {
  service: string;
  postgresUrl?: string;
  redisUrl?: string;
  timeoutMs?: number;
  /**
   * Sibling processes this service works with but does not need to answer (reported under
   * `siblings`, never failing readiness): each is up while a key matching its pattern exists in
   * Redis (a heartbeat with a TTL), e.g. the build workers consuming the deploy queue.
   */
  siblings?: Record<string, { heartbeatPattern: string; whenDown: string }>;
}

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  service: string;
  checks: Record<string, { status: 'up' | 'down'; error?: string; latencyMs: number }>;
  /** Siblings (see HealthOptions.siblings): informative, they do not change `status`. */
  siblings?: Record<string, { status: 'up' | 'down' | 'unknown'; error?: string; count?: number }>;
}

export const HEALTH_OPTIONS = Symbol('HEALTH_OPTIONS');

/** Owns one tiny connection per dependency, so readiness never waits behind application traffic. */
@Injectable()
export class DependencyProbe implements OnModuleDestroy {
  private readonly pool?: pg.Pool;
  private readonly redis?: Redis;
  readonly service: string;
  private readonly timeoutMs: number;
  private readonly siblings: NonNullable<HealthOptions['siblings']>;

  constructor(options: HealthOptions) {
    this.service = options.service;
    this.siblings = options.siblings ?? {};
    this.timeoutMs = options.timeoutMs ?? 1500;
    if (options.postgresUrl) {
      this.pool = new pg.Pool({ connectionString: options.postgresUrl, max: 1, connectionTimeoutMillis: this.timeoutMs, idleTimeoutMillis: 30_000 });
      this.pool.on('error', () => undefined);
    }
    if (options.redisUrl) {
      // Kept open between checks: it reconnects (unlike a one-off probe) so /ready recovers by itself.
      this.redis = redisConnection(options.redisUrl, 'probe', { connectTimeout: this.timeoutMs, retryStrategy: BACKOFF_TO_2S });
      this.redis.on('error', () => undefined);
      this.redis.connect().catch(() => undefined);
    }
  }

  async check(): Promise<ReadinessReport> {
    const checks: ReadinessReport['checks'] = {};
    const run = async (name: string, fn: () => Promise<unknown>) => {
      const started = performance.now();
      try {
        await withTimeout(fn(), this.timeoutMs);
        checks[name] = { status: 'up', latencyMs: Math.round(performance.now() - started) };
      } catch (error) {
        checks[name] = { status: 'down', error: oneLine(error), latencyMs: Math.round(performance.now() - started) };
      }
    };
    await Promise.all([
      this.pool ? run('postgres', () => this.pool!.query('SELECT 1')) : undefined,
      this.redis ? run('redis', () => this.redis!.ping()) : undefined,
    ]);
    const ok = Object.values(checks).every((c) => c.status === 'up');
    const names = Object.keys(this.siblings);
    if (!names.length) return { status: ok ? 'ok' : 'unavailable', service: this.service, checks };
    const siblings: NonNullable<ReadinessReport['siblings']> = {};
    await Promise.all(names.map(async (name) => (siblings[name] = await this.sibling(name))));
    return { status: ok ? 'ok' : 'unavailable', service: this.service, checks, siblings };
  }

  /** Up while a heartbeat key of the sibling exists; unknown when Redis does not answer. */
  async sibling(name: string): Promise<NonNullable<ReadinessReport['siblings']>[string]> {
    const sibling = this.siblings[name];
    if (!sibling || !this.redis) return { status: 'unknown', error: 'not watched' };
    try {
      let cursor = '0';
      let count = 0;
      // Bounded: at most 20 SCAN pages (heartbeat keys are few; the pattern matches nothing else).
      for (let page = 0; page < 20; page++) {
        const [next, keys] = await withTimeout(this.redis.scan(cursor, 'MATCH', sibling.heartbeatPattern, 'COUNT', 1000), this.timeoutMs);
        count += keys.length;
        cursor = next;
        if (cursor === '0') break;
      }
      return count > 0 ? { status: 'up', count } : { status: 'down', error: sibling.whenDown, count: 0 };
    } catch (error) {
      return { status: 'unknown', error: `Redis: ${oneLine(error)}` };
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.redis?.disconnect();
    await this.pool?.end().catch(() => undefined);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
