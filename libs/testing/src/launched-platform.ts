/**
 * The platform exactly as `pnpm start` runs it: the built launcher with its embedded defaults (no
 * DATABASE_URL: embedded Postgres under SLIPWAY_HOME; no REDIS_URL: the launcher's own choice of
 * Redis), a fresh SLIPWAY_HOME in a temp dir, as whoever runs the suite (root in CI). Only ports
 * and the queue prefix are set (plus what a suite passes in `env`, an operator's setting such as
 * WORKER_CONCURRENCY), so it can run beside other suites on one machine. Shared by the hostile
 * (tools/hostile) and framework (tools/frameworks) suites; needs the apps built (`dist`).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRIES } from '@slipway/config';
import pg from 'pg';
import { ROOT } from './deploy-harness.js';
import { freePort, startProcess, type RunningProcess } from './process.js';

const LAUNCHER = join(ROOT, 'tools/launcher/dist/main.js');
const CLI = join(ROOT, SERVICE_ENTRIES.cli);
const OUTWARD_ENV = ['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];

/**
 * The operator's settings for reaching the registry (a CA to trust, a proxy), as an operator's
 * `pnpm start` has them: a platform a test launches needs them to fetch Node and package managers.
 */
export function outwardEnv(): Record<string, string> {
  return Object.fromEntries(OUTWARD_ENV.filter((name) => process.env[name]).map((name) => [name, process.env[name]!]));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
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

export interface PlatformRuntimeFile {
  databaseUrl: string;
  redisUrl: string;
  processes: Record<string, number>;
}

export interface PlatformPorts {
  gateway: number;
  auth: number;
  edge: number;
  worker: number;
  postgres: number;
}

export interface LaunchOptions {
  /** Names the temp home and the queue prefix (`slipway-<suite>-<label>-…`). */
  suite?: string;
  /** A directory put first on the platform's PATH (the fail-closed test's fake bwrap). */
  pathPrefix?: string;
  /** Operator settings added to the launcher's environment. */
  env?: Record<string, string>;
}

export class LaunchedPlatform {
  private constructor(
    readonly home: string,
    readonly launcher: RunningProcess,
    readonly ports: PlatformPorts,
  ) {}

  static async start(label: string, options: LaunchOptions = {}): Promise<LaunchedPlatform> {
    const suite = options.suite ?? 'hostile';
    const home = await mkdtemp(join(tmpdir(), `slipway-${suite}-${label}-`));
    await chmod(home, 0o755); // as `pnpm start` makes .slipway
    const [gateway, auth, edge, worker, postgres] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const path = [options.pathPrefix, process.env['PATH']].filter(Boolean).join(':');
    // What the operator's shell gives `pnpm start` to reach the outside world (a TLS-intercepting proxy's CA, a proxy).
    const outward = outwardEnv();
    const launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: {
        ...outward,
        PATH: path,
        HOME: process.env['HOME'],
        SLIPWAY_HOME: home,
        SLIPWAY_PG_PORT: String(postgres),
        // Other suites may run a platform on the machine's Redis at the same time: a queue of our own.
        QUEUE_PREFIX: `slipway-${suite}-${label}-${process.pid}`,
        GATEWAY_PORT: String(gateway),
        AUTH_PORT: String(auth),
        EDGE_PORT: String(edge),
        BUILD_WORKER_PORT: String(worker),
        PUBLIC_URL: `http://localhost:${gateway}`,
        AUTH_PUBLIC_URL: `http://localhost:${auth}`,
        APPS_DOMAIN: `localhost:${edge}`,
        ...options.env,
      },
    });
    const platform = new LaunchedPlatform(home, launcher, { gateway, auth, edge, worker, postgres });
    try {
      await launcher.waitForOutput(/Slipway is ready/, 150_000);
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  async runtime(): Promise<PlatformRuntimeFile> {
    return JSON.parse(await readFile(join(this.home, 'runtime.json'), 'utf8')) as PlatformRuntimeFile;
  }

  async masterKey(): Promise<string> {
    return (await readFile(join(this.home, 'master.key'), 'utf8')).trim();
  }

  async postgresPassword(): Promise<string> {
    return (await readFile(join(this.home, 'pg', 'password'), 'utf8')).trim();
  }

  /** Runs the real `slipway` binary against this platform; killed (code null) after `timeoutMs`. */
  cli(args: string[], env: Record<string, string> = {}, timeoutMs = 15 * 60_000): Promise<CliResult> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env['PATH'], SLIPWAY_HOME: this.home, SLIPWAY_URL: `http://127.0.0.1:${this.ports.gateway}`, SLIPWAY_POLL_INTERVAL_MS: '250', NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => {
        stderr += `\n(killed: no result within ${timeoutMs} ms)`;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** `slipway admin bootstrap`: an owner of its own, an application, its API key and owner token. */
  async bootstrap(email: string, app: string): Promise<PlatformAccount> {
    const result = await this.cli(['admin', 'bootstrap', '--email', email, '--app', app, '--plan', 'pro', '--json']);
    if (result.code !== 0) throw new Error(`bootstrap failed (exit ${result.code}): ${result.stdout.slice(0, 2000)} ${result.stderr.slice(-2000)}`);
    return JSON.parse(result.stdout) as PlatformAccount;
  }

  async setSecrets(account: PlatformAccount, values: Record<string, string>): Promise<void> {
    const result = await this.cli(['secrets', 'set', ...Object.entries(values).map(([k, v]) => `${k}=${v}`), '--json'], { SLIPWAY_API_KEY: account.apiKey });
    if (result.code !== 0) throw new Error(`secrets set failed: ${result.stdout} ${result.stderr}`);
  }

  /** `slipway auth enable`: sign-in on, which gives the application a database of its own. */
  async enableSignIn(account: PlatformAccount): Promise<void> {
    const result = await this.cli(['auth', 'enable', '--json'], { SLIPWAY_TOKEN: account.ownerToken, SLIPWAY_APPLICATION_ID: account.applicationId });
    if (result.code !== 0) throw new Error(`auth enable failed: ${result.stdout} ${result.stderr}`);
  }

  /** `slipway deploy <dir> --json`: the final task, succeeded or failed (never throws for a failed deploy). */
  async deploy(account: PlatformAccount, dir: string, timeoutMs?: number): Promise<PlatformTask> {
    const result = await this.cli(['deploy', dir, '--json'], { SLIPWAY_API_KEY: account.apiKey }, timeoutMs);
    try {
      return JSON.parse(result.stdout) as PlatformTask;
    } catch {
      throw new Error(`deploy gave no task (exit ${result.code}): ${result.stdout.slice(0, 2000)} ${result.stderr.slice(-2000)}`);
    }
  }

  /** An application's address as a browser reaches it: the edge, by Host. */
  viaEdge(slug: string, path = '/', timeoutMs = 10_000, headers: Record<string, string> = {}): Promise<HttpResult> {
    return this.get(this.ports.edge, path, `${slug}.localhost:${this.ports.edge}`, timeoutMs, headers);
  }

  /** The edge's own readiness (a host that is no application's). */
  edgeHealth(timeoutMs = 2000): Promise<HttpResult> {
    return this.get(this.ports.edge, '/health/ready', `127.0.0.1:${this.ports.edge}`, timeoutMs);
  }

  private get(port: number, path: string, host: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<HttpResult> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, headers: { ...headers, host }, timeout: timeoutMs }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => resolve({ status: 0, headers: {}, body: 'response aborted' }));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (error) => resolve({ status: 0, headers: {}, body: error.message }));
      req.end();
    });
  }

  /** SQL on the platform database, as the operator (the test), never as a tenant. */
  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: (await this.runtime()).databaseUrl });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
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

  /** Ctrl-C, as an operator stops `pnpm start`; then the home goes (embedded Postgres and all). */
  async stop(): Promise<void> {
    await this.launcher.stop('SIGINT', 30_000);
    await rm(this.home, { recursive: true, force: true });
  }
}
