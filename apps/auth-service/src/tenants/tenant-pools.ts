import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { TENANT_CONNECTION_BUDGET, type TenantConnectionBudget } from './tenant-connection-budget.js';
import type { Tenant } from './tenant.js';

/**
 * One small pg pool per tenant database, least-recently-used first out when there are more
 * tenants than the budget's pools (AUTH_MAX_TENANT_POOLS, lowered so that pools × size fit
 * AUTH_MAX_TENANT_CONNECTIONS and the server). Pools connect as the application's own role.
 * An evicted pool closes its idle connections at once and the rest as their queries return.
 */
@Injectable()
export class TenantPools implements OnModuleDestroy {
  private readonly logger = new Logger('TenantPools');
  private readonly pools = new Map<string, { url: string; pool: pg.Pool }>();

  constructor(@Inject(TENANT_CONNECTION_BUDGET) private readonly budget: TenantConnectionBudget) {}

  /** The tenant's pool, untyped: TenantsService.db brands it (the only place a TenantDb is made). */
  get(tenant: Tenant): pg.Pool {
    const entry = this.pools.get(tenant.applicationId);
    if (entry && entry.url === tenant.databaseUrl) {
      this.pools.delete(tenant.applicationId);
      this.pools.set(tenant.applicationId, entry);
      return entry.pool;
    }
    if (entry) this.close(tenant.applicationId);
    const pool = new pg.Pool({ connectionString: tenant.databaseUrl, max: this.budget.poolSize, idleTimeoutMillis: 30_000 });
    pool.on('error', (error) => this.logger.warn(`idle connection of ${tenant.slug} failed: ${error.message}`));
    this.pools.set(tenant.applicationId, { url: tenant.databaseUrl, pool });
    while (this.pools.size > this.budget.pools) this.close(this.pools.keys().next().value!);
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  close(applicationId: string): void {
    const entry = this.pools.get(applicationId);
    if (!entry) return;
    this.pools.delete(applicationId);
    this.retire(entry.pool);
  }

  /**
   * Ends an evicted pool once no request waits for one of its connections: pg-pool's end() never
   * serves nor fails requests already queued for a connection, which would then hang for good.
   */
  private retire(pool: pg.Pool): void {
    const end = () => {
      if (pool.waitingCount > 0) return;
      pool.off('release', end);
      pool.end().catch((error: Error) => this.logger.warn(`closing a tenant pool failed: ${error.message}`));
    };
    pool.on('release', end);
    end();
  }

  async onModuleDestroy(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.pool.end().catch(() => undefined)));
  }
}
