import { availableParallelism } from 'node:os';
import { ConfigError, host, httpUrl, loadConfig, port, processShare, z } from '@slipway/config';

/** A number of processes, 1–64, or `auto` (one per available CPU). */
const processCount = z
  .string()
  .refine((v) => v === 'auto' || /^[1-9]\d?$/.test(v), 'must be a whole number from 1 to 64, or auto')
  .transform((v) => Math.min(64, v === 'auto' ? availableParallelism() : Number(v)));

/** The launcher's own environment: everything optional, embedded defaults otherwise. */
export const launcherConfigSchema = z.object({
  DATABASE_URL: z
    .string()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
    .optional(),
  /** The server of the applications' databases (PgBouncer goes in front of it); default DATABASE_URL / the embedded one. */
  APP_DATABASES_ADMIN_URL: z
    .string()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL')
    .optional(),
  SLIPWAY_MASTER_KEY: z.string().optional(),
  SLIPWAY_HOME: z.string().optional(),
  SLIPWAY_PG_PORT: port(54329),
  /** The embedded Postgres's max_connections and the slots of those only superusers (the platform's role) may use. */
  SLIPWAY_PG_MAX_CONNECTIONS: z.coerce.number().int().min(20).default(200),
  SLIPWAY_PG_SUPERUSER_RESERVED: z.coerce.number().int().min(3).default(10),
  /** PgBouncer, in front of the applications' databases (the only way an app reaches its database). */
  SLIPWAY_PGBOUNCER_PORT: port(54330),
  /** Server connections one application may hold through PgBouncer (its database and its role). */
  APP_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).default(5),
  /** Each application role's CONNECTION LIMIT on the server: its app through PgBouncer + the sign-in service's pool for it. */
  APP_DATABASE_CONNECTION_LIMIT: z.coerce.number().int().min(1).default(10),
  /** Client connections PgBouncer holds at once, all applications together. */
  APP_DATABASE_POOLER_MAX_CLIENTS: z.coerce.number().int().min(10).max(15_000).default(2000),
  /** Seconds a client of PgBouncer has to log in before it is dropped. */
  APP_DATABASE_POOLER_LOGIN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(60).default(5),
  /** The sign-in service's connections per application (checked against APP_DATABASE_CONNECTION_LIMIT). */
  AUTH_TENANT_POOL_SIZE: z.coerce.number().int().positive().default(5),
  /** The address every service listens on (the launcher holds the gateway's, the sign-in service's and nginx's sockets on it). */
  HOST: host,
  GATEWAY_PORT: port(3000),
  /**
   * Independent gateway processes on the one socket the launcher holds for GATEWAY_PORT: a kill -9
   * of one costs no request. Unset: GATEWAY_WORKERS when the operator set it (its old meaning under
   * `pnpm start`), else 2. Each process runs without node:cluster (GATEWAY_WORKERS=1).
   */
  GATEWAY_PROCESSES: processCount.optional(),
  GATEWAY_WORKERS: processCount.optional(),
  /** Independent sign-in service processes on the one socket the launcher holds for AUTH_PORT. */
  AUTH_PROCESSES: processCount.default(2),
  AUTH_PORT: port(3001),
  EDGE_PORT: port(8080),
  BUILD_WORKER_PORT: port(3003),
  PUBLIC_URL: httpUrl('http://localhost:3000'),
  AUTH_PUBLIC_URL: httpUrl('http://localhost:3001'),
  APPS_DOMAIN: z.string().default('localhost:8080'),
  APPS_SCHEME: z.enum(['http', 'https']).default('http'),
  READY_TIMEOUT_MS: z.coerce.number().int().min(1000).default(90_000),
  LOG_LEVEL: z.string().default('log'),
  /** The edge's HTTPS (`acme`): nginx then listens on EDGE_HTTPS_PORT too, a socket the launcher holds as well. */
  EDGE_HTTPS: z.enum(['off', 'acme']).default('off'),
  EDGE_HTTPS_PORT: port(443),
  /** Who serves the apps on EDGE_PORT: `nginx` (the default; run by the runtime supervisor, programmed by the edge) or `node` (the Node edge alone). */
  EDGE_DATA_PLANE: z.enum(['nginx', 'node']).default('nginx'),
  /** Backups of the embedded Postgres (WAL archiving, base backups, restores): on unless turned off. */
  BACKUPS: z.enum(['on', 'off']).default('on'),
  /** Hours between scheduled base backups. */
  BACKUP_INTERVAL_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 30)
    .default(24),
  /** Days base backups (and the WAL they need) are kept; point-in-time restore reaches this far back. */
  BACKUP_RETENTION_DAYS: z.coerce.number().min(0.01).max(3650).default(7),
  /** At most this many seconds of changes wait before their WAL file is archived (what a lost disk loses). */
  BACKUP_WAL_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  /** The build worker's setting, checked before anything starts (`auto` = `on`). */
  BUILD_SANDBOX: z
    .enum(['on', 'auto', 'off'])
    .default('on')
    .transform((value) => (value === 'off' ? 'off' : 'on')),
});

/**
 * An application role's limit must leave its app's PgBouncer pool and the sign-in service's pools
 * room: AUTH_PROCESSES processes each hold ⌊AUTH_TENANT_POOL_SIZE / AUTH_PROCESSES⌋ (at least 1).
 */
function checkConnectionBudget<
  T extends { APP_DATABASE_CONNECTION_LIMIT: number; APP_DATABASE_POOL_SIZE: number; AUTH_TENANT_POOL_SIZE: number; AUTH_PROCESSES: number },
>(config: T): T {
  const auth = config.AUTH_PROCESSES * processShare(config.AUTH_TENANT_POOL_SIZE, config.AUTH_PROCESSES);
  const needed = config.APP_DATABASE_POOL_SIZE + auth;
  if (config.APP_DATABASE_CONNECTION_LIMIT < needed) {
    const authTerm =
      config.AUTH_PROCESSES > 1
        ? `the sign-in service's ${auth} (AUTH_TENANT_POOL_SIZE ${config.AUTH_TENANT_POOL_SIZE} over AUTH_PROCESSES ${config.AUTH_PROCESSES}, at least 1 each)`
        : `AUTH_TENANT_POOL_SIZE ${config.AUTH_TENANT_POOL_SIZE}`;
    throw new ConfigError(
      `APP_DATABASE_CONNECTION_LIMIT: must be at least APP_DATABASE_POOL_SIZE ${config.APP_DATABASE_POOL_SIZE} + ${authTerm} = ${needed} (got ${config.APP_DATABASE_CONNECTION_LIMIT}), or an application's own pools would be refused by its role's limit`,
    );
  }
  return config;
}

/** Gateway processes under `pnpm start`: GATEWAY_PROCESSES, else the operator's GATEWAY_WORKERS, else 2. */
export function gatewayProcesses(config: Pick<LauncherConfig, 'GATEWAY_PROCESSES' | 'GATEWAY_WORKERS'>): number {
  return config.GATEWAY_PROCESSES ?? config.GATEWAY_WORKERS ?? 2;
}

export type LauncherConfig = z.output<typeof launcherConfigSchema>;

export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  return checkConnectionBudget(loadConfig(launcherConfigSchema, env));
}
