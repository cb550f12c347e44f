import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_ENTRIES, type RuntimeFile } from '@slipway/config';
import { applyMigrations } from '@slipway/platform-schema';
import { holdListeningSocket, type HeldSocket } from '@slipway/service-kit';
import { gatewayProcesses, type LauncherConfig } from './config.js';
import { BackupService } from './backups.js';
import { log } from './log.js';
import { stopLeftoverNginx } from './nginx-leftovers.js';
import { resolveMasterKey } from './master-key.js';
import { sandboxPreflight } from './sandbox-preflight.js';
import { nginxPreflight } from './nginx-preflight.js';
import { freeLoopbackPort } from './ports.js';
import { startPostgres, type PostgresHandle } from './postgres.js';
import { prepareApplicationDatabases } from './app-databases.js';
import { pgbouncerPreflight, startPgbouncer, type PgbouncerHandle } from './pgbouncer.js';
import { writePrivateFile } from './private-files.js';
import { startRedis, type RedisHandle } from './redis.js';
import { readiness, supervisorReady, type ServiceSpec } from './services.js';
import { CrashWindow, DEFAULT_SUPERVISION, SupervisedService } from './supervisor.js';
import { StartupError } from './errors.js';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What startHttpApp prints once it accepts on a socket handed down by the launcher. */
const LISTENING_ON_HELD_SOCKET = /listening on the inherited socket/;

/** The public ports of the nginx data plane, held by the launcher for the runtime supervisor (which hands them to nginx). */
function edgeSockets(config: LauncherConfig): ServiceSpec['sockets'] {
  return [
    { name: 'edge', host: config.HOST, port: config.EDGE_PORT },
    ...(config.EDGE_HTTPS === 'acme' ? [{ name: 'edge-https', host: config.HOST, port: config.EDGE_HTTPS_PORT }] : []),
  ];
}

function services(config: LauncherConfig, runtimeSocket: string | undefined, nginxPlane: boolean): ServiceSpec[] {
  // The runtime supervisor owns the apps' processes (so an edge crash does not end them); it
  // gets the edge's environment and PORT (apps may reach the edge's port from their sandbox).
  // With the nginx data plane it also gets nginx's listening sockets, so that a restart of nginx
  // or of the supervisor itself never leaves the port closed or held by an orphan.
  const runtime: ServiceSpec[] = runtimeSocket
    ? [
        {
          name: 'runtime',
          port: config.EDGE_PORT,
          entry: SERVICE_ENTRIES.runtime,
          ready: () => supervisorReady(runtimeSocket),
          ...(nginxPlane ? { sockets: edgeSockets(config) } : {}),
        },
      ]
    : [];
  // The gateway and the sign-in service: several independent processes accepting on one socket
  // the launcher holds, so a kill -9 of one leaves the others serving the same backlog.
  const http = (port: number) => [{ name: 'http', host: config.HOST, port }];
  return [
    {
      name: 'gateway',
      port: config.GATEWAY_PORT,
      entry: SERVICE_ENTRIES.gateway,
      sockets: http(config.GATEWAY_PORT),
      processes: gatewayProcesses(config),
      listening: LISTENING_ON_HELD_SOCKET,
    },
    {
      name: 'auth-service',
      port: config.AUTH_PORT,
      entry: SERVICE_ENTRIES['auth-service'],
      sockets: http(config.AUTH_PORT),
      processes: config.AUTH_PROCESSES,
      listening: LISTENING_ON_HELD_SOCKET,
    },
    ...runtime,
    // A standby edge (modules loaded) takes over at once when the edge dies: routing is back in
    // well under a second instead of a whole process start (only with the runtime supervisor,
    // which keeps the apps running meanwhile).
    { name: 'edge', port: config.EDGE_PORT, entry: SERVICE_ENTRIES.edge, ...(runtimeSocket ? { standby: /standby edge: loaded, ready to take over/ } : {}) },
    { name: 'build-worker', port: config.BUILD_WORKER_PORT, entry: SERVICE_ENTRIES['build-worker'] },
  ];
}

/**
 * `pnpm start`: Postgres (DATABASE_URL or embedded), Redis (REDIS_URL, or its own redis-server
 * with a generated password), migrations, then every service; prints the ready line once all health checks pass.
 * A service that exits unexpectedly is restarted with backoff (a crash loop stops everything with
 * one line); Ctrl-C stops everything it started.
 */
export class Launcher {
  private postgres?: PostgresHandle;
  private redis?: RedisHandle;
  private pgbouncer?: PgbouncerHandle;
  private backups?: BackupService;
  private running: SupervisedService[] = [];
  /** Listening sockets held for the services (closed after they stopped). */
  private held: HeldSocket[] = [];
  private runtime?: RuntimeFile;
  private watch?: NodeJS.Timeout;
  private stopping?: Promise<void>;
  private readonly home: string;

  constructor(private readonly config: LauncherConfig) {
    this.home = config.SLIPWAY_HOME ?? join(REPO_ROOT, '.slipway');
  }

  async start(): Promise<void> {
    const started = Date.now();
    await sandboxPreflight(this.config.BUILD_SANDBOX);
    if (this.config.EDGE_DATA_PLANE === 'nginx' && process.env['SLIPWAY_RUNTIME_DRIVER'] !== 'kubernetes') await nginxPreflight();
    const pgbouncerBinary = await pgbouncerPreflight();
    // Traversable, not listable: the build user and each application's user open their own
    // workspace or release below it (then their sandbox hides the rest); nobody lists it.
    await mkdir(this.home, { recursive: true, mode: 0o711 });
    await chmod(this.home, 0o711);
    const masterKey = await resolveMasterKey(this.home, this.config.SLIPWAY_MASTER_KEY);
    this.redis = await startRedis(this.home, this.config.REDIS_URL, { onRestart: () => this.writeRuntime(), onCrashLoop: (line) => this.crashLoop(line) });
    const backups = this.config.BACKUPS === 'on' && !this.config.DATABASE_URL;
    const connections = {
      maxConnections: this.config.SLIPWAY_PG_MAX_CONNECTIONS,
      superuserReserved: this.config.SLIPWAY_PG_SUPERUSER_RESERVED,
      ...(backups ? { archiveTimeoutSeconds: this.config.BACKUP_WAL_SECONDS } : {}),
    };
    this.postgres = await startPostgres(this.home, this.config.DATABASE_URL, this.config.SLIPWAY_PG_PORT, connections, {
      onRestart: () => this.writeRuntime(),
      onCrashLoop: (line) => this.crashLoop(line),
    });
    const migrated = await applyMigrations(this.postgres.url);
    log(
      'launcher',
      migrated.applied.length
        ? `applied migrations: ${migrated.applied.join(', ')}`
        : `database schema up to date (${migrated.alreadyApplied.length} migrations)`,
    );
    this.pgbouncer = await this.startPgbouncer(pgbouncerBinary, masterKey);

    // Not with the kubernetes driver: apps are pods there, not processes of this machine.
    const runtimeSocket = process.env['SLIPWAY_RUNTIME_DRIVER'] === 'kubernetes' ? undefined : join(this.home, 'supervisor', 'runtime.sock');
    // nginx serves the apps; the runtime supervisor keeps it (so it outlives an edge restart), the
    // edge programs it and listens behind it on a loopback port of its own.
    const nginxPlane = this.config.EDGE_DATA_PLANE === 'nginx' && runtimeSocket !== undefined;
    if (this.config.EDGE_DATA_PLANE === 'nginx' && !nginxPlane)
      log('launcher', 'SLIPWAY_RUNTIME_DRIVER=kubernetes: the Node edge serves the apps (EDGE_DATA_PLANE=node)');
    const plane: NodeJS.ProcessEnv = nginxPlane
      ? {
          EDGE_DATA_PLANE: 'nginx',
          EDGE_NGINX_OWNER: 'supervisor',
          EDGE_INTERNAL_PORT: String(process.env['EDGE_INTERNAL_PORT'] ?? (await freeLoopbackPort())),
        }
      : { EDGE_DATA_PLANE: 'node' };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...(runtimeSocket ? { RUNTIME_SUPERVISOR_SOCKET: runtimeSocket } : {}),
      ...plane,
      DATABASE_URL: this.postgres.url,
      REDIS_URL: this.redis.url,
      SLIPWAY_MASTER_KEY: masterKey,
      SLIPWAY_HOME: this.home,
      PUBLIC_URL: this.config.PUBLIC_URL,
      AUTH_PUBLIC_URL: this.config.AUTH_PUBLIC_URL,
      APPS_DOMAIN: this.config.APPS_DOMAIN,
      APPS_SCHEME: this.config.APPS_SCHEME,
      LOG_LEVEL: this.config.LOG_LEVEL,
      ...(process.stdout.isTTY ? {} : { NO_COLOR: '1' }),
      // Applications reach their databases through PgBouncer only (the edge forwards its port into
      // the sandbox of an application that has a database, and names it in its DATABASE_URL); the
      // gateway tells PgBouncer about each database it provisions.
      APP_DATABASES_POOLER_URL: this.pgbouncer.url,
      APP_DATABASES_POOLER_DIR: this.pgbouncer.dir,
      APP_DATABASES_POOLER_ADMIN_URL: this.pgbouncer.adminUrl,
      APP_DATABASE_CONNECTION_LIMIT: String(this.config.APP_DATABASE_CONNECTION_LIMIT),
      AUTH_TENANT_POOL_SIZE: String(this.config.AUTH_TENANT_POOL_SIZE),
      GATEWAY_INTERNAL_URL: `http://127.0.0.1:${this.config.GATEWAY_PORT}`,
      AUTH_INTERNAL_URL: `http://127.0.0.1:${this.config.AUTH_PORT}`,
      EDGE_INTERNAL_URL: `http://127.0.0.1:${this.config.EDGE_PORT}`,
      // The launcher's GATEWAY_PROCESSES replace node:cluster workers under `pnpm start`.
      GATEWAY_WORKERS: '1',
    };
    if (this.config.GATEWAY_WORKERS !== undefined && this.config.GATEWAY_PROCESSES === undefined) {
      log(
        'launcher',
        `GATEWAY_WORKERS=${this.config.GATEWAY_WORKERS}: under pnpm start that many gateway processes share its port (GATEWAY_PROCESSES), each without node:cluster`,
      );
    }
    await this.startServices(services(this.config, runtimeSocket, nginxPlane), env);
    await this.waitUntilReady();
    this.runtime = {
      pid: process.pid,
      databaseUrl: this.postgres.url,
      redisUrl: this.redis.url,
      publicUrl: this.config.PUBLIC_URL,
      authPublicUrl: this.config.AUTH_PUBLIC_URL,
      appsDomain: this.config.APPS_DOMAIN,
      appsScheme: this.config.APPS_SCHEME,
      startedAt: new Date().toISOString(),
      processes: {},
    };
    await this.writeRuntime();
    this.watch = setInterval(() => void this.watchHealth(), 5000);
    if (backups && this.postgres.dataDir) {
      this.backups = new BackupService({
        home: this.home,
        serverUrl: this.postgres.url,
        dataDir: this.postgres.dataDir,
        masterKey,
        poolerAdminUrl: this.pgbouncer.adminUrl,
        config: this.config,
      });
      await this.backups.start();
    } else if (this.config.BACKUPS === 'on') {
      log('backup', "off: DATABASE_URL is the operator's own server, whose backups (and point-in-time restore) are the operator's; see docs/guides/backups.md");
    } else {
      log('backup', 'off (BACKUPS=off): nothing is backed up');
    }
    log('launcher', `all services healthy in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    process.stdout.write(`Slipway is ready: ${this.config.PUBLIC_URL}\n`);
  }

  /**
   * Holds each service's listening sockets, then starts its processes (`spec.processes`, the
   * first named after the service, the others `name-2`, …), each supervised on its own but
   * counting its crashes with its siblings'.
   */
  private async startServices(specs: ServiceSpec[], env: NodeJS.ProcessEnv): Promise<void> {
    const onCrashLoop = (line: string) => this.crashLoop(line);
    const sockets = new Map<string, HeldSocket[]>();
    // An nginx an earlier run left behind (its supervisor gone) would hold the edge's port.
    if (specs.some((spec) => spec.name === 'runtime' && spec.sockets?.length)) await stopLeftoverNginx(this.home);
    for (const spec of specs) {
      const held: HeldSocket[] = [];
      for (const socket of spec.sockets ?? []) {
        try {
          held.push(await holdListeningSocket(socket.port, socket.host));
        } catch (error) {
          throw new StartupError(`${spec.name}: ${(error as Error).message}`);
        }
      }
      this.held.push(...held);
      sockets.set(spec.name, held);
    }
    for (const spec of specs) {
      const processes = spec.processes ?? 1;
      const crashes = new CrashWindow(spec.name, DEFAULT_SUPERVISION.windowMs);
      for (let i = 0; i < processes; i++) {
        const member = i === 0 ? spec : { ...spec, name: `${spec.name}-${i + 1}` };
        this.running.push(
          new SupervisedService(REPO_ROOT, member, env, DEFAULT_SUPERVISION, onCrashLoop, () => this.writeRuntime(), {
            crashes,
            sockets: sockets.get(spec.name)!,
            processes,
          }),
        );
      }
      if (processes > 1) log('launcher', `${spec.name}: ${processes} processes on :${spec.port}`);
    }
  }

  /**
   * PgBouncer in front of the server holding the applications' databases (the embedded Postgres,
   * or APP_DATABASES_ADMIN_URL / DATABASE_URL of the operator's own server), after the back-fill
   * of every application role.
   */
  private async startPgbouncer(binary: string, masterKey: string): Promise<PgbouncerHandle> {
    const adminUrl = this.config.APP_DATABASES_ADMIN_URL ?? this.postgres!.url;
    const server = new URL(adminUrl);
    const databases = await prepareApplicationDatabases(this.postgres!.url, adminUrl, masterKey, this.config.APP_DATABASE_CONNECTION_LIMIT);
    return startPgbouncer(this.home, binary, {
      port: this.config.SLIPWAY_PGBOUNCER_PORT,
      server: { host: server.hostname, port: Number(server.port || 5432) },
      databases,
      poolSize: this.config.APP_DATABASE_POOL_SIZE,
      maxClients: this.config.APP_DATABASE_POOLER_MAX_CLIENTS,
      loginTimeoutSeconds: this.config.APP_DATABASE_POOLER_LOGIN_TIMEOUT_SECONDS,
      onRestart: () => this.writeRuntime(),
      onCrashLoop: (line) => this.crashLoop(line),
    });
  }

  /** A crash loop: one line, then everything stops (exit 1). */
  private crashLoop(line: string): void {
    if (this.stopping) return;
    log('launcher', line);
    void this.stop().then(() => process.exit(1));
  }

  private writing: Promise<void> = Promise.resolve();

  /** runtime.json with the current pids (rewritten after every restart; one write at a time, in order). */
  private writeRuntime(): Promise<void> {
    this.writing = this.writing.then(() => this.writeRuntimeNow()).catch((error: unknown) => log('launcher', `could not write runtime.json: ${String(error)}`));
    return this.writing;
  }

  private async writeRuntimeNow(): Promise<void> {
    if (!this.runtime || this.stopping) return;
    this.runtime.processes = {
      ...Object.fromEntries(this.running.map((s) => [s.name, s.pid!])),
      ...Object.fromEntries(this.running.flatMap((s) => (s.standby?.child.pid ? [[`${s.name}-standby`, s.standby.child.pid]] : []))),
      ...(this.postgres?.pid ? { postgres: this.postgres.pid } : {}),
      ...(this.redis?.pid ? { redis: this.redis.pid } : {}),
      ...(this.pgbouncer?.pid ? { pgbouncer: this.pgbouncer.pid } : {}),
    };
    // Holds both URLs with their passwords: root-only (0600) even if an older file was looser.
    await writePrivateFile(join(this.home, 'runtime.json'), `${JSON.stringify(this.runtime, null, 2)}\n`);
  }

  private readonly unhealthy = new Map<string, string>();
  private readonly siblingsDown = new Map<string, string>();

  /** Every 5 s: a running service whose /health/ready turns bad (or good again) is logged with what it reports down. */
  private async watchHealth(): Promise<void> {
    const checked = new Set<number>();
    for (const service of this.running) {
      if (this.stopping || service.recovering) continue;
      // Processes sharing a port answer for each other: one look per port.
      if (service.spec.sockets?.length) {
        if (checked.has(service.spec.port)) continue;
        checked.add(service.spec.port);
      }
      const ready = await readiness(service.spec);
      const siblings = this.siblingsDown.get(service.name);
      if (ready.ok && (ready.siblingsDown ?? '') !== (siblings ?? '')) {
        log('launcher', ready.siblingsDown ? `${service.name} reports ${ready.siblingsDown}` : `${service.name} reports its siblings up again`);
        if (ready.siblingsDown) this.siblingsDown.set(service.name, ready.siblingsDown);
        else this.siblingsDown.delete(service.name);
      }
      const before = this.unhealthy.get(service.name);
      if (ready.ok && before !== undefined) {
        this.unhealthy.delete(service.name);
        log('launcher', `${service.name} is ready again`);
      } else if (!ready.ok) {
        const detail = ready.detail ?? (service.spec.ready ? 'not answering' : 'not answering /health/ready');
        if (before !== detail) log('launcher', `${service.name} is not ready: ${detail}`);
        this.unhealthy.set(service.name, detail);
      }
    }
  }

  private async waitUntilReady(): Promise<void> {
    const deadline = Date.now() + this.config.READY_TIMEOUT_MS;
    const pending = new Map(this.running.map((s) => [s, '']));
    while (pending.size) {
      if (this.stopping) throw new StartupError('a service stopped during start-up');
      for (const service of [...pending.keys()]) {
        const ready = await service.readiness();
        if (ready.ok) pending.delete(service);
        else pending.set(service, ready.detail ?? '');
      }
      if (!pending.size) break;
      if (Date.now() > deadline) {
        throw new StartupError(
          `not ready after ${this.config.READY_TIMEOUT_MS / 1000}s: ${[...pending].map(([s, detail]) => `${s.name} (:${s.spec.port}/health/ready${detail ? `: ${detail}` : ''})`).join(', ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.watch);
      await this.backups?.stop();
      await Promise.all(this.running.map((s) => s.stop()));
      // The runtime supervisor stops nginx; if it was gone already (a crash loop), nothing else would.
      await stopLeftoverNginx(this.home).catch((e: unknown) => log('launcher', `nginx stop: ${String(e)}`));
      await this.writing;
      await this.pgbouncer?.stop();
      await this.postgres?.stop().catch((e: unknown) => log('launcher', `postgres stop: ${String(e)}`));
      await this.redis?.stop();
      for (const socket of this.held.splice(0)) socket.close();
      await rm(join(this.home, 'runtime.json'), { force: true });
    })();
    return this.stopping;
  }
}
