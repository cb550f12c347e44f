import { join } from 'node:path';
import { POOLER_AUTH_FILE, POOLER_DATABASES_FILE } from '@slipway/sign-in-core';

/** The admin console's user (RELOAD after an application database is provisioned). */
export const POOLER_ADMIN_USER = 'slipway_pooler';

export interface PoolerLimits {
  /** Server connections per application database and per application role (APP_DATABASE_POOL_SIZE). */
  poolSize: number;
  /** Client connections PgBouncer holds at once, every application together (APP_DATABASE_POOLER_MAX_CLIENTS). */
  maxClients: number;
  /** Seconds a client has to finish logging in (APP_DATABASE_POOLER_LOGIN_TIMEOUT_SECONDS). */
  loginTimeoutSeconds: number;
}

/**
 * pgbouncer.ini (rewritten at each start). Why each line:
 * - loopback only, no Unix socket: only what the runtime sandbox forwards (the port alone, into
 *   the namespaces of applications that have a database) reaches it.
 * - `auth_type = scram-sha-256` against auth_file: PgBouncer checks the client's password itself,
 *   before any server connection exists; a client that never logs in holds a PgBouncer client
 *   slot for `client_login_timeout` seconds and no Postgres slot at all.
 * - `pool_mode = session`: a server connection belongs to one client for the client's whole
 *   session, so applications may keep using what Postgres ties to a session (prepared
 *   statements, which pg/Prisma/Drizzle use; SET; advisory locks; LISTEN; temp tables) exactly
 *   as against Postgres itself. Transaction pooling would break them silently.
 * - `max_db_connections` / `max_user_connections` (each database and each role is ONE application)
 *   and `default_pool_size`: no application holds more server connections than this; its further
 *   clients wait (`query_wait_timeout`) and then get an error, other applications are not affected.
 * - `server_login_retry = 1`: after a failed connection to the server (Postgres restarting) PgBouncer
 *   tries again after 1 s instead of its default 15, so clients that arrived meanwhile (they wait)
 *   are served about a second after Postgres is back, not up to 15 s later.
 */
export function pgbouncerIni(dir: string, port: number, limits: PoolerLimits): string {
  return [
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = scram-sha-256',
    `auth_file = ${join(dir, POOLER_AUTH_FILE)}`,
    `admin_users = ${POOLER_ADMIN_USER}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    'pool_mode = session',
    `max_client_conn = ${limits.maxClients}`,
    `default_pool_size = ${limits.poolSize}`,
    `max_db_connections = ${limits.poolSize}`,
    `max_user_connections = ${limits.poolSize}`,
    `client_login_timeout = ${limits.loginTimeoutSeconds}`,
    'query_wait_timeout = 30',
    'server_idle_timeout = 60',
    'server_login_retry = 1',
    // Drivers (pgjdbc, some ORMs) send this at start-up; PgBouncer would refuse the connection.
    'ignore_startup_parameters = extra_float_digits',
    'log_connections = 0',
    'log_disconnections = 0',
    'syslog = 0',
    `%include ${join(dir, POOLER_DATABASES_FILE)}`,
    '',
  ].join('\n');
}
