/**
 * The platform exactly as `pnpm start` runs it: the built launcher with its embedded defaults (no
 * DATABASE_URL: embedded Postgres under SLIPWAY_HOME; no REDIS_URL: the launcher's own choice of
 * Redis), a fresh SLIPWAY_HOME in a temp dir, as whoever runs the suite (root in CI). Only ports
 * and the queue prefix are set (plus what a suite passes in `env`, an operator's setting such as
 * WORKER_CONCURRENCY), so it can run beside other suites on one machine. Shared by the hostile
 * (tools/hostile), framework (tools/frameworks), end-to-end (tools/e2e) and fault (tools/faults)
 * suites; needs the apps built (`dist`).
 */
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRIES, type RuntimeFile } from '@slipway/config';
import type pg from 'pg';
import { ROOT } from './deploy-harness.js';
import { deploymentTask, readyStatus, requestByHost, type EdgeRequest, type HttpResult } from './platform-http.js';
import { freePort, runToEnd, startProcess, type CliResult, type RunningProcess } from './process.js';
import { createEmptyDatabase, dropApplicationDatabases, queryRows, type TestDatabase } from './test-database.js';

/** The built entry points of `pnpm start`'s launcher and of the `slipway` CLI. */
export const LAUNCHER_MAIN = join(ROOT, 'apps/launcher/dist/main.js');
export const CLI_MAIN = join(ROOT, SERVICE_ENTRIES.cli);
const OUTWARD_ENV = ['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];

/**
 * The operator's settings for reaching the registry (a CA to trust, a proxy), as an operator's
 * `pnpm start` has them: a platform a test launches needs them to fetch Node and package managers.
 */
export function outwardEnv(): Record<string, string> {
  return Object.fromEntries(OUTWARD_ENV.filter((name) => process.env[name]).map((name) => [name, process.env[name]!]));
}

export interface PlatformAccount {
  ownerId: string;
  applicationId: string;
  slug: string;
  apiKey: string;
  ownerToken: string;
  appUrl: string;
}

export interface PlatformTask {
  taskId?: string;
  id?: string;
  status: string;
  steps?: { name: string; status: string; log?: string; durationMs?: number }[];
  spec?: Record<string, unknown> & { framework?: string | null; kind?: string; nodeVersion?: string | null };
  warnings?: { code: string; message?: string; detail?: string; path?: string }[];
  hazards?: { code: string; message?: string }[];
  error?: { code?: string; message?: string; step?: string | null } | null;
}

/** A deployment as `GET /api/v1/deployments/:id` reports it (always with its steps). */
export interface PlatformTaskState extends PlatformTask {
  steps: NonNullable<PlatformTask['steps']>;
}

export type PlatformRuntimeFile = RuntimeFile;

export interface PlatformPorts {
  gateway: number;
  auth: number;
  edge: number;
  worker: number;
  /** The embedded Postgres's (unused with `database: 'test-server'`). */
  postgres: number;
  /** The platform's PgBouncer (applications reach their databases through it only). */
  pgbouncer: number;
}

/** The services by the launcher's names for them (runtime.json's `processes`), and their ports. */
const SERVICE_PORTS = { gateway: 'gateway', 'auth-service': 'auth', edge: 'edge', 'build-worker': 'worker' } as const satisfies Record<
  string,
  keyof PlatformPorts
>;
export type PlatformService = keyof typeof SERVICE_PORTS;

export interface LaunchOptions {
  /** Names the temp home and the queue prefix (`slipway-<suite>-<label>-…`). */
  suite?: string;
  /** A directory put first on the platform's PATH (the fail-closed test's fake bwrap). */
  pathPrefix?: string;
  /** Operator settings added to the launcher's environment (a function of the ports for those that name one). */
  env?: Record<string, string> | ((ports: PlatformPorts) => Record<string, string>);
  /**
   * `test-server`: an empty database of its own on the machine's Postgres (DATABASE_URL) instead of
   * the embedded Postgres; dropped on stop, with the applications' own databases the platform made.
   */
  database?: 'embedded' | 'test-server';
  /** The plan `bootstrap` gives an owner; null: none asked for (the CLI's default, free). Default pro. */
  plan?: string | null;
  /** A home made beforehand (a restored backup) instead of a new empty one; removed on stop all the same. */
  home?: string;
  /** These ports instead of free ones (a platform restored in place of one that stopped). */
  ports?: PlatformPorts;
}

export class LaunchedPlatform {
  private constructor(
    readonly home: string,
    /** The running launcher (a new one after `restart`). */
    public launcher: RunningProcess,
    readonly ports: PlatformPorts,
    private readonly db: TestDatabase | undefined,
    private readonly plan: string | null,
    /** The launcher's environment, for `restart`. */
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(label: string, options: LaunchOptions = {}): Promise<LaunchedPlatform> {
    const suite = options.suite ?? 'hostile';
    const home = options.home ?? (await mkdtemp(join(tmpdir(), `slipway-${suite}-${label}-`)));
    await chmod(home, 0o755); // as `pnpm start` makes .slipway
    const ports: PlatformPorts =
      options.ports ??
      (await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]).then(
        ([gateway, auth, edge, worker, postgres, pgbouncer]) => ({
          gateway: gateway!,
          auth: auth!,
          edge: edge!,
          worker: worker!,
          postgres: postgres!,
          pgbouncer: pgbouncer!,
        }),
      ));
    const { gateway, auth, edge, worker, postgres, pgbouncer } = ports;
    const path = [options.pathPrefix, process.env['PATH']].filter(Boolean).join(':');
    // What the operator's shell gives `pnpm start` to reach the outside world (a TLS-intercepting proxy's CA, a proxy).
    const outward = outwardEnv();
    const db = options.database === 'test-server' ? await createEmptyDatabase(`${suite}-${label}`) : undefined;
    const database = db ? { DATABASE_URL: db.url } : { SLIPWAY_PG_PORT: String(postgres) };
    const env: NodeJS.ProcessEnv = {
      ...outward,
      PATH: path,
      HOME: process.env['HOME'],
      SLIPWAY_HOME: home,
      ...database,
      // Other suites may run a platform on the machine's Redis at the same time: a queue of our own.
      QUEUE_PREFIX: `slipway-${suite}-${label}-${process.pid}`,
      GATEWAY_PORT: String(gateway),
      AUTH_PORT: String(auth),
      EDGE_PORT: String(edge),
      BUILD_WORKER_PORT: String(worker),
      SLIPWAY_PGBOUNCER_PORT: String(pgbouncer),
      PUBLIC_URL: `http://localhost:${gateway}`,
      AUTH_PUBLIC_URL: `http://localhost:${auth}`,
      APPS_DOMAIN: `localhost:${edge}`,
      ...(typeof options.env === 'function' ? options.env(ports) : options.env),
    };
    const launcher = startProcess(process.execPath, [LAUNCHER_MAIN], { cwd: ROOT, env });
    const platform = new LaunchedPlatform(home, launcher, ports, db, options.plan === undefined ? 'pro' : options.plan, env);
    try {
      await launcher.waitForOutput(/Slipway is ready/, 180_000);
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  /**
   * Ctrl-C, then `pnpm start` again on the same home and ports (what an operator's restart of
   * the whole platform is), with `env` changed; resolves once it is ready. The first launcher's
   * exit is returned (its output stays readable there).
   */
  async restart(env: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
    const previous = this.launcher;
    await previous.stop('SIGINT', 60_000);
    const exit = await previous.exited;
    this.launcher = startProcess(process.execPath, [LAUNCHER_MAIN], { cwd: ROOT, env: { ...this.env, ...env } });
    await this.launcher.waitForOutput(/Slipway is ready/, 180_000);
    return { ...exit, output: previous.output() };
  }

  async runtime(): Promise<PlatformRuntimeFile> {
    return JSON.parse(await readFile(join(this.home, 'runtime.json'), 'utf8')) as PlatformRuntimeFile;
  }

  /** The pid the launcher published for one of its processes (a service, `redis`, `runtime`…). */
  async pid(name: string): Promise<number> {
    const pid = (await this.runtime()).processes[name];
    if (!pid) throw new Error(`no ${name} in runtime.json`);
    return pid;
  }

  /** Status of a service's `/health/ready` (0 when nothing answers within two seconds). */
  ready(service: PlatformService): Promise<number> {
    return readyStatus(this.ports[SERVICE_PORTS[service]]);
  }

  async masterKey(): Promise<string> {
    return (await readFile(join(this.home, 'master.key'), 'utf8')).trim();
  }

  async postgresPassword(): Promise<string> {
    return (await readFile(join(this.home, 'pg', 'password'), 'utf8')).trim();
  }

  /** Runs the real `slipway` binary against this platform; killed (code null) after `timeoutMs`. */
  cli(args: string[], env: Record<string, string> = {}, timeoutMs = 15 * 60_000): Promise<CliResult> {
    const base = {
      PATH: process.env['PATH'],
      SLIPWAY_HOME: this.home,
      SLIPWAY_URL: `http://127.0.0.1:${this.ports.gateway}`,
      SLIPWAY_POLL_INTERVAL_MS: '200',
      NO_COLOR: '1',
    };
    return runToEnd(process.execPath, [CLI_MAIN, ...args], { env: { ...base, ...env }, timeoutMs });
  }

  /** `slipway admin bootstrap`: an owner of its own, an application, its API key and owner token. */
  async bootstrap(email: string, app: string): Promise<PlatformAccount> {
    const plan = this.plan === null ? [] : ['--plan', this.plan];
    const result = await this.cli(['admin', 'bootstrap', '--email', email, '--app', app, ...plan, '--json']);
    if (result.code !== 0) throw new Error(`bootstrap failed (exit ${result.code}): ${result.stdout.slice(0, 2000)} ${result.stderr.slice(-2000)}`);
    return JSON.parse(result.stdout) as PlatformAccount;
  }

  /** The CLI's environment for acting as the application of `account` (its API key). */
  cliEnv(account: Pick<PlatformAccount, 'apiKey'>): Record<string, string> {
    return { SLIPWAY_API_KEY: account.apiKey };
  }

  async setSecrets(account: PlatformAccount, values: Record<string, string>): Promise<void> {
    const result = await this.cli(['secrets', 'set', ...Object.entries(values).map(([k, v]) => `${k}=${v}`), '--json'], this.cliEnv(account));
    if (result.code !== 0) throw new Error(`secrets set failed: ${result.stdout} ${result.stderr}`);
  }

  /** `slipway auth enable`: sign-in on, which gives the application a database of its own. */
  async enableSignIn(account: PlatformAccount): Promise<void> {
    const result = await this.cli(['auth', 'enable', '--json'], { SLIPWAY_TOKEN: account.ownerToken, SLIPWAY_APPLICATION_ID: account.applicationId });
    if (result.code !== 0) throw new Error(`auth enable failed: ${result.stdout} ${result.stderr}`);
  }

  /**
   * One end user signs up on the application's sign-in service, from the application's own
   * origin, as a browser would. Never throws: a refusal or a network error is a status (0 for the
   * latter) and the start of the body, for the caller to report.
   */
  async signUp(account: PlatformAccount, email: string, timeoutMs = 30_000): Promise<{ status: number; body: string }> {
    return fetch(`http://127.0.0.1:${this.ports.auth}/a/${account.slug}/sign-up/email`, {
      method: 'POST',
      headers: { origin: account.appUrl, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'a long passphrase', name: 'Visitor' }),
      signal: AbortSignal.timeout(timeoutMs),
    }).then(
      async (response) => ({ status: response.status, body: (await response.text()).slice(0, 300) }),
      (error: Error) => ({ status: 0, body: error.message }),
    );
  }

  /**
   * `slipway deploy <dir> --json` (plus `options`, e.g. `--root-directory apps/web`): the final task,
   * succeeded or failed (never throws for a failed deploy).
   */
  async deploy(account: PlatformAccount, dir: string, timeoutMs?: number, options: string[] = []): Promise<PlatformTask> {
    const result = await this.cli(['deploy', dir, ...options, '--json'], this.cliEnv(account), timeoutMs);
    try {
      return JSON.parse(result.stdout) as PlatformTask;
    } catch {
      throw new Error(`deploy gave no task (exit ${result.code}): ${result.stdout.slice(0, 2000)} ${result.stderr.slice(-2000)}`);
    }
  }

  /** A deployment's task as the API reports it (throws unless it answers 200). */
  task(account: Pick<PlatformAccount, 'apiKey'>, id: string): Promise<PlatformTaskState> {
    return deploymentTask<PlatformTaskState>(this.ports.gateway, account.apiKey, id);
  }

  /**
   * An application's address as a browser reaches it: the edge, by Host (fetch() would drop the
   * header). `edge`: a timeout alone, or the whole request (then `headers` is not read).
   */
  viaEdge(slug: string, path = '/', edge: number | EdgeRequest = {}, headers: Record<string, string> = {}): Promise<HttpResult> {
    const options = typeof edge === 'number' ? { timeoutMs: edge, headers } : edge;
    return requestByHost(this.ports.edge, path, { ...options, host: options.host ?? `${slug}.localhost:${this.ports.edge}` });
  }

  /** The edge's own readiness (a host that is no application's). */
  edgeHealth(timeoutMs = 2000): Promise<HttpResult> {
    return requestByHost(this.ports.edge, '/health/ready', { host: `127.0.0.1:${this.ports.edge}`, timeoutMs });
  }

  /** SQL on the platform database, as the operator (the test), never as a tenant. */
  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    return queryRows<T>((await this.runtime()).databaseUrl, sql, params);
  }

  /** The launcher's log (every service's lines, prefixed). */
  log(): string {
    return this.launcher.output();
  }

  /** The last lines one service printed (launcher prefixes: `edge        | …`), for evidence. */
  serviceLog(name: string, lines = 12): string[] {
    return this.launcher
      .output()
      .split('\n')
      .filter((line) => line.startsWith(`${name.padEnd(12)}|`))
      .slice(-lines)
      .map((line) => line.slice(14, 400));
  }

  /**
   * Ctrl-C, as an operator stops `pnpm start` (SIGKILL of whatever is left after a minute); then
   * the home goes (embedded Postgres and all), or the databases on the test server.
   */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    await this.launcher.stop('SIGINT', 60_000);
    const exit = await this.launcher.exited;
    if (this.db) {
      await dropApplicationDatabases(this.db.url);
      await this.db.drop();
    }
    await rm(this.home, { recursive: true, force: true }).catch(() => undefined);
    return exit;
  }
}
