/**
 * The platform exactly as `pnpm start` runs it: the built launcher (`tools/launcher/dist/main.js`)
 * with its own embedded Postgres, its own redis-server and every service under its supervision,
 * on free ports and a private SLIPWAY_HOME. Plus what the supervision suite measures with: a
 * bounded request loop against a deployed app, and the app's processes as /proc shows them.
 */
import { request } from 'node:http';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRIES, type RuntimeFile } from '@slipway/config';
import { ROOT, freePort, outwardEnv, startProcess, waitFor, type RunningProcess } from '@slipway/testing';
import { run, type Account, type CliResult } from './platform.js';

export const LAUNCHER = join(ROOT, 'tools/launcher/dist/main.js');
const CLI = join(ROOT, SERVICE_ENTRIES.cli);

export class LaunchedPlatform {
  private constructor(
    readonly home: string,
    readonly launcher: RunningProcess,
    readonly ports: { gateway: number; 'auth-service': number; edge: number; 'build-worker': number },
  ) {}

  static async start(label: string, env: Record<string, string> = {}): Promise<LaunchedPlatform> {
    const home = await mkdtemp(join(tmpdir(), `slipway-faults-${label}-`));
    await chmod(home, 0o755); // the embedded Postgres runs as `postgres` when we are root
    const [gateway, auth, edge, worker, pgPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        ...outwardEnv(),
        NO_COLOR: '1',
        SLIPWAY_HOME: home,
        SLIPWAY_PG_PORT: String(pgPort),
        GATEWAY_PORT: String(gateway),
        AUTH_PORT: String(auth),
        EDGE_PORT: String(edge),
        BUILD_WORKER_PORT: String(worker),
        PUBLIC_URL: `http://localhost:${gateway}`,
        AUTH_PUBLIC_URL: `http://localhost:${auth}`,
        APPS_DOMAIN: `localhost:${edge}`,
        BCRYPT_ROUNDS: '4',
        ...env,
      },
    });
    const platform = new LaunchedPlatform(home, launcher, { gateway, 'auth-service': auth, edge, 'build-worker': worker });
    try {
      await launcher.waitForOutput(/Slipway is ready: /, 180_000);
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  async runtime(): Promise<RuntimeFile> {
    return JSON.parse(await readFile(join(this.home, 'runtime.json'), 'utf8')) as RuntimeFile;
  }

  async pid(name: string): Promise<number> {
    const pid = (await this.runtime()).processes[name];
    if (!pid) throw new Error(`no ${name} in runtime.json`);
    return pid;
  }

  /** Status of `/health/ready` (0 when nothing answers within two seconds). */
  async ready(service: keyof LaunchedPlatform['ports']): Promise<number> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.ports[service]}/health/ready`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return response.status;
    } catch {
      return 0;
    }
  }

  cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return run(process.execPath, [CLI, ...args], { PATH: process.env['PATH'], SLIPWAY_HOME: this.home, NO_COLOR: '1', ...env });
  }

  async bootstrap(appName: string): Promise<Account> {
    const result = await this.cli(['admin', 'bootstrap', '--email', 'supervision@example.com', '--app', appName, '--plan', 'pro', '--json']);
    if (result.code !== 0) throw new Error(`bootstrap failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Account;
  }

  cliEnv(account: Account): NodeJS.ProcessEnv {
    return { SLIPWAY_URL: `http://127.0.0.1:${this.ports.gateway}`, SLIPWAY_API_KEY: account.apiKey, SLIPWAY_POLL_INTERVAL_MS: '200' };
  }

  async task(account: Account, id: string): Promise<{ status: string; steps: { name: string; status: string }[]; error?: unknown }> {
    const response = await fetch(`http://127.0.0.1:${this.ports.gateway}/api/v1/deployments/${id}`, { headers: { authorization: `Bearer ${account.apiKey}` }, signal: AbortSignal.timeout(5000) });
    if (response.status !== 200) throw new Error(`task ${id}: ${response.status}`);
    return (await response.json()) as { status: string; steps: { name: string; status: string }[] };
  }

  /** The launcher's log (every service's lines, prefixed). */
  log(): string {
    return this.launcher.output();
  }

  /** Ctrl-C, as an operator stops `pnpm start`; SIGKILL of whatever is left if that does not end it. */
  async stop(): Promise<{ code: number | null }> {
    const exit = await this.launcher.stop('SIGINT', 60_000).then(() => this.launcher.exited);
    await rm(this.home, { recursive: true, force: true }).catch(() => undefined);
    return exit;
  }
}

/** One app request's outcome: when it was sent, and its status (0: no answer). */
export interface Sample {
  at: number;
  status: number;
}

/**
 * Requests `path` of the app at `host` through the edge, one after another (a new connection each,
 * as independent clients do), until stopped or `maxMs` passed: bounded in time and in count.
 */
export class RequestLoop {
  readonly samples: Sample[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(private readonly port: number, private readonly host: string, private readonly path: string, maxMs = 10 * 60_000, maxRequests = 200_000) {
    this.done = (async () => {
      const end = Date.now() + maxMs;
      while (!this.stopped && Date.now() < end && this.samples.length < maxRequests) {
        const at = Date.now();
        this.samples.push({ at, status: await this.one() });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  private one(): Promise<number> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: this.port, path: this.path, headers: { host: this.host }, agent: false, timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      });
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
      req.end();
    });
  }

  /** Samples sent at or after `from` (and before `to`). */
  between(from: number, to = Infinity): Sample[] {
    return this.samples.filter((s) => s.at >= from && s.at < to);
  }

  /** Waits until a request sent after `from` succeeded (200). */
  async answeredAfter(from: number, timeoutMs = 60_000): Promise<Sample> {
    return waitFor(() => this.samples.find((s) => s.at >= from && s.status === 200), { timeoutMs, intervalMs: 20, what: `an app request sent after ${new Date(from).toISOString()} to succeed` });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** Processes whose command line names `needle` (an app's sandbox names its release directory), with their parent. */
export async function processesNaming(needle: string): Promise<{ pid: number; ppid: number }[]> {
  const found: { pid: number; ppid: number }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(needle)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (stat) found.push({ pid: Number(name), ppid });
  }
  return found;
}
