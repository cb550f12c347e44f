import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { BlobStore } from '@slipway/blob';
import { UnhealthyReleaseError, type ReleaseToRun, type RunningRelease, type RuntimeDriver } from './driver.js';
import { LogBudget } from './logs/log-budget.js';
import { DEFAULT_LOG_LIMITS, type LogLimits } from './logs/log-limits.js';
import { LogRing, readLogRing } from './logs/log-ring.js';
import { ReleaseLog } from './logs/release-log.js';
import { extractRelease } from './release-extractor.js';
import type { AppIds } from './sandbox/app-users.js';
import type { AppCgroup } from './sandbox/cgroups.js';
import type { LocalSandbox } from './sandbox/local-sandbox.js';
import { spawnSandbox } from './sandbox/sandbox-argv.js';
import { SandboxUnavailableError } from './sandbox/sandbox-probe.js';
import { ReleaseWatch, type RuntimeReport } from './watch/release-watch.js';
import { TOOLCHAIN_BIN, TOOLCHAIN_PATH, toolchainEnv, type NodeToolchain, type NodeToolchains } from './toolchain/node-toolchains.js';

/** What `LocalSandbox.prepare` made for a release: its user and its cgroup. */
interface Confinement {
  sandbox: LocalSandbox;
  ids: AppIds;
  cgroup: AppCgroup | null;
}

export interface LocalDriverOptions {
  blobs: BlobStore;
  /** Releases are extracted under `<dir>/releases/<id>`, logs written to `<dir>/logs/<id>.log` (+ `.1`, `.2`… rotated). */
  dir: string;
  /** Each release's log ring and each application's log rate (default `DEFAULT_LOG_LIMITS`). */
  logLimits?: LogLimits;
  healthTimeoutMs: number;
  /**
   * The runtime sandbox (each app as its own user, in its own namespaces, network and cgroup).
   * Without one, apps run unsandboxed — an operator's explicit choice (RUNTIME_SANDBOX=off).
   */
  sandbox?: LocalSandbox;
  /**
   * Where a release's Node.js comes from (the cache the build worker filled); without it, only
   * releases built on the platform's own Node can start.
   */
  toolchains?: NodeToolchains;
  /** Unsandboxed only: run apps as this user when the edge runs as root. */
  user?: { uid: number; gid: number };
  /** Crash restarts: first delay, doubled each time up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/** `wanted` when it is free, else any free loopback port. */
function freePort(wanted = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', (error) => (wanted ? freePort().then(resolve, reject) : reject(error)));
    server.listen(wanted, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** One HTTP request to `/`; any answer below 500 counts as healthy. */
function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET', timeout: 1000, headers: { 'user-agent': 'slipway-health' } }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 500);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A Node release as a child process of the edge: health-gated start, crash restarts with backoff. */
class LocalRelease implements RunningRelease {
  readonly host = '127.0.0.1';
  private child?: ChildProcess;
  private stopping = false;
  private restarts = 0;
  private restartTimer?: NodeJS.Timeout;
  private healthySince = 0;
  /** Crashes, restarts and stderr error lines, for the edge's first-minute watch. */
  private readonly watch = new ReleaseWatch();

  constructor(
    readonly releaseId: string,
    readonly port: number,
    private readonly dir: string,
    private readonly release: ReleaseToRun,
    private readonly log: ReleaseLog,
    private readonly options: LocalDriverOptions,
    private readonly confinement: Confinement | null,
    private readonly toolchain: NodeToolchain | null = null,
  ) {}

  logTail(): string {
    return this.log.tail();
  }

  async report(): Promise<RuntimeReport> {
    const usage = await this.confinement?.cgroup?.stats().catch(() => undefined);
    return { ...this.watch.report(), ...(usage ? { cpuSeconds: usage.cpuSeconds, memoryBytes: usage.memoryBytes } : {}) };
  }

  private write(text: string): void {
    this.log.note(text);
  }

  spawn(): ChildProcess {
    const c = this.confinement;
    const t = this.toolchain;
    // The release's own Node first on PATH (the app cannot set PATH past it: it comes last).
    const first = t ? `${c ? TOOLCHAIN_BIN : join(t.dir, 'bin')}:` : '';
    const env = { HOME: '/tmp', NODE_ENV: 'production', ...(t ? toolchainEnv() : {}), ...this.release.env, PATH: `${first}/usr/local/bin:/usr/bin:/bin`, PORT: String(this.port) };
    const binds = t ? [{ host: t.dir, path: TOOLCHAIN_PATH }] : [];
    const child = c
      ? spawnSandbox(c.sandbox.command(c.ids, c.cgroup, this.dir, env, this.port, this.release.startCommand, binds, this.release.hostPorts).argv, env, { cwd: '/', detached: true })
      : spawn('sh', ['-c', this.release.startCommand], {
          cwd: this.dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
          ...(this.options.user ? { uid: this.options.user.uid, gid: this.options.user.gid } : {}),
        });
    // Read within the app's log budget: past it the pipes pause and the app's writes wait.
    this.log.attach(child.stdout!);
    this.log.attach(child.stderr!);
    child.stderr!.on('data', (chunk: Buffer) => this.watch.stderr(chunk));
    child.on('error', (error) => this.write(`[slipway] could not start: ${error.message}\n`));
    child.on('exit', (code, signal) => {
      this.write(`[slipway] process exited (${signal ?? code})\n`);
      if (this.child !== child || this.stopping || this.healthySince === 0) return;
      this.watch.crashed(String(signal ?? code), () => this.log.tail());
      this.scheduleRestart();
    });
    this.child = child;
    return child;
  }

  private scheduleRestart(): void {
    // A process that stayed up a minute starts its backoff afresh.
    if (Date.now() - this.healthySince > 60_000) this.restarts = 0;
    const delay = Math.min((this.options.backoffMs ?? 1000) * 2 ** this.restarts, this.options.maxBackoffMs ?? 30_000);
    this.restarts += 1;
    this.write(`[slipway] restarting in ${delay} ms (restart ${this.restarts})\n`);
    this.restartTimer = setTimeout(() => {
      if (this.stopping) return;
      this.spawn();
      this.watch.restarted();
      this.healthySince = Date.now();
    }, delay);
  }

  async waitHealthy(): Promise<void> {
    const deadline = Date.now() + this.options.healthTimeoutMs;
    while (Date.now() < deadline) {
      const child = this.child!;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new UnhealthyReleaseError(`the release exited (${child.signalCode ?? child.exitCode}) before it answered HTTP on PORT`, this.log.tail());
      }
      if (await probe(this.port)) {
        this.healthySince = Date.now();
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new UnhealthyReleaseError(`the release did not answer HTTP on PORT ${this.port} within ${Math.round(this.options.healthTimeoutMs / 1000)} s`, this.log.tail());
  }

  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      const c = this.confinement;
      const kill = (signal: NodeJS.Signals) => {
        if (c) return void c.sandbox.signal(child.pid!, c.cgroup, signal);
        try {
          process.kill(-child.pid!, signal);
        } catch {
          /* gone */
        }
      };
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    if (this.confinement) {
      // Whatever of the app outlived its sandbox's set-up processes goes with them.
      if (child?.pid) await this.confinement.sandbox.signal(child.pid, this.confinement.cgroup, 'SIGKILL');
      await this.confinement.cgroup?.remove();
    }
    await this.log.close();
  }
}

/** The `local` runtime driver: releases run as child processes of the edge host. */
export class LocalDriver implements RuntimeDriver {
  readonly name = 'local' as const;

  /** Each application's log budget, shared by its running releases. */
  private readonly budgets = new Map<string, LogBudget>();
  private readonly logLimits: LogLimits;

  constructor(private readonly options: LocalDriverOptions) {
    this.logLimits = options.logLimits ?? DEFAULT_LOG_LIMITS;
  }

  releaseDir(releaseId: string): string {
    return join(this.options.dir, 'releases', releaseId);
  }

  /** The release's Node.js (verified, from the machine's cache, fetched if missing); null: the platform's. */
  private async toolchainOf(release: ReleaseToRun): Promise<NodeToolchain | null> {
    const version = release.nodeVersion;
    const platform = process.version.replace(/^v/, '');
    if (!version || version === platform) return null;
    if (!this.options.toolchains) throw new Error(`release ${release.releaseId} needs Node.js ${version}, and this runtime has no toolchains configured (only ${platform})`);
    return this.options.toolchains.ensure(version);
  }

  logFile(releaseId: string): string {
    return join(this.options.dir, 'logs', `${releaseId}.log`);
  }

  /** The release's log across its ring, oldest first (`lastBytes`: only its end); undefined: none. */
  readLog(releaseId: string, lastBytes?: number): Promise<string | undefined> {
    return readLogRing(this.logFile(releaseId), this.logLimits.files, lastBytes);
  }

  private async openLog(release: ReleaseToRun): Promise<ReleaseLog> {
    const { maxBytes, files, rateBytes, burstBytes, readRateBytes } = this.logLimits;
    const ring = await LogRing.open(this.logFile(release.releaseId), { maxBytes, files });
    let budget = this.budgets.get(release.applicationId);
    if (!budget) {
      budget = new LogBudget({ rateBytes, burstBytes, readRateBytes });
      this.budgets.set(release.applicationId, budget);
    }
    const applicationId = release.applicationId;
    const owner = budget;
    return new ReleaseLog(ring, budget, () => {
      // The application's last release gone: its budget goes too.
      if (owner.size > 0 || this.budgets.get(applicationId) !== owner) return;
      owner.dispose();
      this.budgets.delete(applicationId);
    });
  }

  async start(release: ReleaseToRun): Promise<RunningRelease> {
    const dir = this.releaseDir(release.releaseId);
    const toolchain = await this.toolchainOf(release);
    await extractRelease(await this.options.blobs.get(release.artifactKey), dir);
    await mkdir(join(this.options.dir, 'logs'), { recursive: true, mode: 0o700 });
    const log = await this.openLog(release);
    const sandbox = this.options.sandbox;
    const began = performance.now();
    let confinement: Confinement | null;
    let port: number;
    try {
      confinement = sandbox ? { sandbox, ...(await sandbox.prepare(release.applicationId, release.releaseId, dir)) } : null;
      port = await freePort(release.port);
    } catch (error) {
      await log.close();
      throw error;
    }
    const running = new LocalRelease(release.releaseId, port, dir, release, log, this.options, confinement, toolchain);
    const spawned = performance.now();
    running.spawn();
    try {
      await running.waitHealthy();
      const ms = (t: number) => Math.round(t);
      log.note(`[slipway] healthy ${ms(performance.now() - spawned)} ms after start${confinement ? ` (sandbox as ${confinement.ids.name}, prepared in ${ms(spawned - began)} ms)` : ' (unsandboxed)'}\n`);
    } catch (error) {
      await running.stop(1000);
      // A sandbox that broke since it was last probed must say so, not pass for an unhealthy app.
      const broken = confinement && error instanceof UnhealthyReleaseError ? await confinement.sandbox.recheck(confinement.ids) : null;
      if (broken) throw new SandboxUnavailableError(broken);
      throw error;
    }
    return running;
  }
}
