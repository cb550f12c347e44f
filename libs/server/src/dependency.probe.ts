import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import pg from 'pg';
import { oneLine } from './dependencies.js';

export interface HealthOptions {
  service: string;
  postgresUrl?: string;
  redisUrl?: string;
  timeoutMs?: number;
}

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  service: string;
  checks: Record<string, { status: 'up' | 'down'; error?: string; latencyMs: number }>;
}

export const HEALTH_OPTIONS = Symbol('HEALTH_OPTIONS');

/** Owns one tiny connection per dependency, so readiness never waits behind application traffic. */
@Injectable()
export class DependencyProbe implements OnModuleDestroy {
  private readonly pool?: pg.Pool;
  private readonly redis?: Redis;
  readonly service: string;
  private readonly timeoutMs: number;

  constructor(options: HealthOptions) {
    this.service = options.service;
    this.timeoutMs = options.timeoutMs ?? 1500;
    if (options.postgresUrl) {
      this.pool = new pg.Pool({ connectionString: options.postgresUrl, max: 1, connectionTimeoutMillis: this.timeoutMs, idleTimeoutMillis: 30_000 });
      this.pool.on('error', () => undefined);
    }
    if (options.redisUrl) {
      this.redis = new Redis(options.redisUrl, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: this.timeoutMs,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      });
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
    return { status: ok ? 'ok' : 'unavailable', service: this.service, checks };
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
