import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRIES } from '@slipway/config';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { quoteIdent } from '@slipway/db';
import { TEST_SERVER_URL, createEmptyDatabase, freePort, outwardEnv, startProcess, type RunningProcess, type TestDatabase } from '@slipway/testing';

export const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const LAUNCHER = join(ROOT, 'tools/launcher/dist/main.js');
const CLI = join(ROOT, SERVICE_ENTRIES.cli);

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

export interface Account {
  ownerId: string;
  applicationId: string;
  slug: string;
  apiKey: string;
  ownerToken: string;
  appUrl: string;
}

/** The whole platform as `pnpm start` runs it (the built launcher), on free ports and its own database, Redis and home. */
export class Platform {
  private constructor(
    readonly home: string,
    readonly db: TestDatabase,
    readonly launcher: RunningProcess,
    readonly ports: { gateway: number; auth: number; edge: number },
  ) {}

  /** `env`: further variables for the launcher (and so every service), e.g. SLIPWAY_DNS_SERVERS. */
  static async start(label: string, env: Record<string, string> = {}): Promise<Platform> {
    const home = await mkdtemp(join(tmpdir(), `slipway-${label}-`));
    await chmod(home, 0o755); // builds and apps run as unprivileged users
    const db = await createEmptyDatabase(label);
    const [gateway, auth, edge, worker] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        ...outwardEnv(),
        SLIPWAY_HOME: home,
        DATABASE_URL: db.url,
        // No REDIS_URL: the launcher starts its own password-protected redis-server, as
        // `pnpm start` does, so no other suite's worker can take these jobs either.
        GATEWAY_PORT: String(gateway),
        AUTH_PORT: String(auth),
        EDGE_PORT: String(edge),
        BUILD_WORKER_PORT: String(worker),
        PUBLIC_URL: `http://localhost:${gateway}`,
        AUTH_PUBLIC_URL: `http://127.0.0.1:${auth}`,
        APPS_DOMAIN: `localhost:${edge}`,
        ...env,
      },
    });
    const platform = new Platform(home, db, launcher, { gateway, auth, edge });
    try {
      await launcher.waitForOutput(/Slipway is ready/, 90_000);
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  /** `slipway admin bootstrap --json`, finding the platform through its runtime file. */
  async bootstrap(email: string, app: string): Promise<Account> {
    const result = await this.cli(['admin', 'bootstrap', '--email', email, '--app', app, '--json'], { SLIPWAY_HOME: this.home });
    if (result.code !== 0) throw new Error(`bootstrap failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Account;
  }

  /** Runs the real `slipway` binary. */
  cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env['PATH'], SLIPWAY_URL: `http://127.0.0.1:${this.ports.gateway}`, SLIPWAY_POLL_INTERVAL_MS: '200', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** An application's address as a browser reaches it: the edge, with its Host (fetch() would drop the header). */
  viaEdge(slug: string, path = '/', options: { method?: string; headers?: Record<string, string>; body?: string; host?: string } = {}): Promise<HttpResult> {
    const host = options.host ?? `${slug}.localhost:${this.ports.edge}`;
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.ports.edge, path, method: options.method ?? 'GET', headers: { host, ...options.headers } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end(options.body);
    });
  }

  async stop(): Promise<void> {
    await this.launcher.stop('SIGINT');
    await this.dropApplicationDatabases();
    await this.db.drop();
    await rm(this.home, { recursive: true, force: true });
  }

  /** Applications' own databases (sign-in) live on the shared test server: drop them too. */
  private async dropApplicationDatabases(): Promise<void> {
    const platformDb = new pg.Client({ connectionString: this.db.url });
    await platformDb.connect();
    const { rows } = await platformDb.query<{ database_name: string; role_name: string }>('SELECT database_name, role_name FROM application_databases').catch(() => ({ rows: [] }));
    await platformDb.end();
    if (!rows.length) return;
    const server = new pg.Client({ connectionString: TEST_SERVER_URL });
    await server.connect();
    for (const r of rows) {
      await server.query(`DROP DATABASE IF EXISTS ${quoteIdent(r.database_name)} WITH (FORCE)`);
      await server.query(`DROP ROLE IF EXISTS ${quoteIdent(r.role_name)}`);
    }
    await server.end();
  }
}
