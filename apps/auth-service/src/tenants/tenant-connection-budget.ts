import pg from 'pg';
import { processShare } from '@slipway/config';
import type { AuthConfig } from '../config.js';

/** What the server of the applications' databases allows. */
export interface ServerConnections {
  maxConnections: number;
  superuserReserved: number;
  /** `reserved_connections` (Postgres 16+; 0 before). */
  reserved: number;
}

/** How many tenant connections this process may hold, and so how many tenant pools at once. */
export interface TenantConnectionBudget {
  connections: number;
  pools: number;
  /** Connections of each tenant pool of this process (AUTH_TENANT_POOL_SIZE, divided among the service's processes). */
  poolSize: number;
  /** Why the configured values were lowered, for the boot log; null when they fit as set. */
  sizedDown: string | null;
}

export const TENANT_CONNECTION_BUDGET = Symbol('TENANT_CONNECTION_BUDGET');

export class TenantBudgetError extends Error {
  override readonly name = 'TenantBudgetError';
}

/**
 * The arithmetic (docs/decisions/auth-connection-budget.md): tenant connections of this process
 *   = min(AUTH_MAX_TENANT_CONNECTIONS,
 *         max_connections − superuser_reserved_connections − reserved_connections − AUTH_PLATFORM_RESERVED_CONNECTIONS)
 * and pools at once = min(AUTH_MAX_TENANT_POOLS, ⌊tenant connections / (AUTH_TENANT_POOL_SIZE + 1)⌋)
 * — each tenant also holds one LISTEN connection for the session cache when it is on (else
 * + 0) — so pools × (size + listener) never exceeds the budget. Less room than one pool: refuse.
 * With N processes of the service on one socket (SLIPWAY_SERVICE_PROCESSES, set by `pnpm
 * start`), the connections, the room and each tenant's pool are divided by N (⌊…⌋, a pool at
 * least 1), so the N processes together hold what one process was sized for.
 */
export function tenantConnectionBudget(
  config: Pick<
    AuthConfig,
    'AUTH_MAX_TENANT_CONNECTIONS' | 'AUTH_MAX_TENANT_POOLS' | 'AUTH_TENANT_POOL_SIZE' | 'AUTH_PLATFORM_RESERVED_CONNECTIONS' | 'AUTH_SESSION_CACHE_SIZE'
  > & { SLIPWAY_SERVICE_PROCESSES?: number },
  server: ServerConnections,
): TenantConnectionBudget {
  const processes = config.SLIPWAY_SERVICE_PROCESSES ?? 1;
  const poolSize = processShare(config.AUTH_TENANT_POOL_SIZE, processes);
  const perTenant = poolSize + (config.AUTH_SESSION_CACHE_SIZE > 0 ? 1 : 0);
  const room = server.maxConnections - server.superuserReserved - server.reserved - config.AUTH_PLATFORM_RESERVED_CONNECTIONS;
  const share = processes > 1 ? ` / ${processes} processes` : '';
  const roomHere = processes > 1 ? Math.floor(Math.max(room, 0) / processes) : room;
  const connections = Math.min(Math.floor(config.AUTH_MAX_TENANT_CONNECTIONS / processes), roomHere);
  const serverArithmetic = `max_connections ${server.maxConnections} − superuser_reserved_connections ${server.superuserReserved} − reserved_connections ${server.reserved} − AUTH_PLATFORM_RESERVED_CONNECTIONS ${config.AUTH_PLATFORM_RESERVED_CONNECTIONS}`;
  const arithmetic = processes > 1 ? `(${serverArithmetic})${share} = ${roomHere}` : `${serverArithmetic} = ${room}`;
  if (connections < perTenant) {
    throw new TenantBudgetError(
      `AUTH_MAX_TENANT_CONNECTIONS: the applications' database server leaves room for ${Math.max(roomHere, 0)} sign-in connections${processes > 1 ? ' in this process' : ''} (${arithmetic}), fewer than one tenant needs (AUTH_TENANT_POOL_SIZE ${config.AUTH_TENANT_POOL_SIZE}${share}${perTenant > poolSize ? ' + 1 for the session cache' : ''}): raise the server's max_connections, or lower AUTH_PLATFORM_RESERVED_CONNECTIONS or AUTH_TENANT_POOL_SIZE`,
    );
  }
  const pools = Math.min(config.AUTH_MAX_TENANT_POOLS, Math.floor(connections / perTenant));
  const reasons: string[] = [];
  const wanted = Math.floor(config.AUTH_MAX_TENANT_CONNECTIONS / processes);
  if (connections < wanted)
    reasons.push(`tenant connections ${connections} instead of AUTH_MAX_TENANT_CONNECTIONS ${config.AUTH_MAX_TENANT_CONNECTIONS}${share} (${arithmetic})`);
  if (pools < config.AUTH_MAX_TENANT_POOLS)
    reasons.push(
      `${pools} tenant pools at once instead of AUTH_MAX_TENANT_POOLS ${config.AUTH_MAX_TENANT_POOLS} (${connections} connections / ${perTenant} per tenant)`,
    );
  return { connections, pools, poolSize, sizedDown: reasons.length ? reasons.join('; ') : null };
}

/** Reads the server's limits with the admin role (APP_DATABASES_ADMIN_URL). */
export async function readServerConnections(url: string): Promise<ServerConnections> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ max: string; superuser: string; reserved: string | null }>(
      `SELECT current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS superuser, current_setting('reserved_connections', true) AS reserved`,
    );
    const row = rows[0]!;
    return { maxConnections: Number(row.max), superuserReserved: Number(row.superuser), reserved: Number(row.reserved ?? 0) };
  } finally {
    await client.end().catch(() => undefined);
  }
}
