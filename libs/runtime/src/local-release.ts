import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { SandboxUnavailableError, isSameProcess, releaseListeningPorts, spawnSandbox, type AppCgroup, type AppIds, type LocalSandbox } from '@slipway/sandbox';
import { TOOLCHAIN_BIN, TOOLCHAIN_PATH, toolchainEnv, type NodeToolchain } from '@slipway/toolchains';
import { AppProcess } from './app-process.js';
import { UnhealthyReleaseError, type PortFound, type ReleaseToRun, type RunningRelease } from './driver.js';
import { LogFifo } from './logs/log-fifos.js';
import type { ReleaseLog } from './logs/release-log.js';
import { nodeOptionsFor } from './node-young-generation.js';
import { PortSearch, portFinding, portInUse, unansweredMessage } from './port-search.js';
import type { ReleaseRecords } from './release-records.js';
import { ReleaseWatch, type RuntimeReport } from './watch/release-watch.js';

/** What `LocalSandbox.prepare` made for a release: its user and its cgroup. */
export interface Confinement {
  sandbox: LocalSandbox;
  ids: AppIds;
  cgroup: AppCgroup | null;
}

export interface LocalReleaseOptions {
  healthTimeoutMs: number;
  /** Unsandboxed only: run apps as this user when the edge runs as root. */
  user?: { uid: number; gid: number };
  backoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * A supervised release (a runtime supervisor's): its processes outlive this one, its output goes
 * through FIFOs, and what runs is recorded for the next supervisor.
 */
export interface Supervision {
  records: ReleaseRecords;
  fifos: { stdout: LogFifo; stderr: LogFifo };
}

/** A release a previous runtime supervisor started, taken over by this one. */
export interface AdoptedRelease extends RunningRelease {
  readonly applicationId: string;
  readonly pid: number | undefined;
  /**
   * The edge claims it with its ReleaseToRun (its environment: crash restarts can start it again);
   * resolves once it answers HTTP, rejects (UnhealthyReleaseError) when it does not in time.
   */
  claim(spec: ReleaseToRun): Promise<void>;
  /** Resolves when it ended before anyone claimed it (it has been cleaned up by then). */
  readonly gone: Promise<void>;
}

/** How long an app started again on another port has to end after SIGTERM. */
const REROUTE_GRACE_MS = 2000;
/** How long what an app wrote just before it exited may take to reach its log. */
const OUTPUT_SETTLE_MS = 200;

/**
 * One HTTP request to `/` where the edge reaches the app; any answer below 500 counts as healthy.
 * Its Host is `127.0.0.1:<port>` whatever the address (the host an app's allowed-hosts list names
 * for the health check: app-environment.ts).
 */
function probe(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host, port, path: '/', method: 'GET', timeout: 1000, headers: { 'user-agent': 'slipway-health', host: `127.0.0.1:${port}` } },
      (res) => {
        res.resume();
        resolve((res.statusCode ?? 500) < 500);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * A Node release as a process tree of this runtime (health-gated start, crash restarts with
 * backoff), or adopted from the runtime supervisor that ran it before this one: then it is only
 * watched until the edge claims it again with its ReleaseToRun, and restarted after a crash from then on.
 */
export class LocalRelease implements AdoptedRelease {
  private process?: AppProcess;
  /** The sandbox's link to the host for its current process (the kernel path); rejects when it could not be made. */
  private linked?: Promise<void>;
  private lastExit = '';
  private stopping = false;
  /** Its process is being stopped to start again on another port (not a crash). */
  private rerouting = false;
  private restarts = 0;
  private restartTimer?: NodeJS.Timeout;
  private healthySince = 0;
  private stopped?: Promise<void>;
  private markGone!: () => void;
  readonly gone = new Promise<void>((resolve) => (this.markGone = resolve));
  /**
   * Crashes, restarts and stderr error lines, for the edge's first-minute watch. Kept in this
   * process: a release taken over from a previous supervisor counts afresh from its adoption.
   */
  private readonly releaseWatch = new ReleaseWatch();

  constructor(
    readonly releaseId: string,
    readonly applicationId: string,
    /** The PORT the app is given (sandboxed: also the host port pasta holds for it, and what its address derives from). */
    readonly envPort: number,
    /**
     * Where the app listens instead of PORT, once found (sandboxed, at first: where the analyzer
     * said it would): inside the sandbox, pasta leads `envPort` there; unsandboxed, it is the host
     * port the edge proxies to. Undefined: PORT.
     */
    private appPort: number | undefined,
    private readonly dir: string,
    /** Undefined: adopted, not claimed yet (its environment is not known here). */
    private spec: ReleaseToRun | undefined,
    private readonly log: ReleaseLog,
    private readonly options: LocalReleaseOptions,
    private readonly confinement: Confinement | null,
    private toolchain: NodeToolchain | null,
    private readonly supervision: Supervision | null,
    private readonly toolchainOf: (spec: ReleaseToRun) => Promise<NodeToolchain | null> = async () => null,
  ) {
    // One reader per FIFO for the release's whole life: the app's restarts write to the same pipes.
    if (supervision) {
      log.attach(supervision.fifos.stdout.reader(), 'stdout');
      this.readStderr(supervision.fifos.stderr.reader());
    }
  }

  /** The app's stderr: into its log (stamped as stderr, within the budget), and its error lines counted. */
  private readStderr(stream: Readable): void {
    this.log.attach(stream, 'stderr');
    stream.on('data', (chunk: Buffer) => this.releaseWatch.stderr(chunk));
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Where the edge proxies to: the sandbox's address on the kernel path (sandbox-link.ts), else the host's loopback. */
  get host(): string {
    return this.confinement ? this.confinement.sandbox.address(this.envPort) : '127.0.0.1';
  }

  /** Where the edge proxies to: PORT's port (a sandbox leads it to the app's own), or the unsandboxed app's own port. */
  get port(): number {
    return this.confinement ? this.envPort : (this.appPort ?? this.envPort);
  }

  get portFound(): PortFound | undefined {
    return this.appPort !== undefined && this.appPort !== this.envPort ? { port: this.appPort, envPort: this.envPort } : undefined;
  }

  logTail(): string {
    return this.log.tail();
  }

  async report(): Promise<RuntimeReport> {
    const usage = await this.confinement?.cgroup?.stats().catch(() => undefined);
    return { ...this.releaseWatch.report(), ...(usage ? { cpuSeconds: usage.cpuSeconds, memoryBytes: usage.memoryBytes } : {}) };
  }

  private write(text: string): void {
    this.log.note(text);
  }

  spawn(): void {
    const spec = this.spec;
    if (!spec) throw new Error(`release ${this.releaseId} cannot be started again before the edge claims it`);
    const c = this.confinement;
    const t = this.toolchain;
    // The release's own Node first on PATH (the app cannot set PATH past it: it comes last).
    const first = t ? `${c ? TOOLCHAIN_BIN : join(t.dir, 'bin')}:` : '';
    // Under a memory limit, a young generation sized for it (node-young-generation.ts).
    const nodeOptions = nodeOptionsFor(spec.env['NODE_OPTIONS'], c?.cgroup ? c.sandbox.limits.memoryBytes : null, t?.version);
    const env = {
      HOME: '/tmp',
      NODE_ENV: 'production',
      ...(t ? toolchainEnv() : {}),
      ...spec.env,
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      PATH: `${first}/usr/local/bin:/usr/bin:/bin`,
      PORT: String(this.envPort),
    };
    const binds = t ? [{ host: t.dir, path: TOOLCHAIN_PATH }] : [];
    const fifos = this.supervision?.fifos;
    const out = fifos ? [fifos.stdout.appEnd(), fifos.stderr.appEnd()] : undefined;
    let child: ChildProcess;
    try {
      child = c
        ? spawnSandbox(
            c.sandbox.command(
              c.ids,
              c.cgroup,
              this.dir,
              env,
              { listen: this.envPort, app: this.appPort },
              spec.startCommand,
              binds,
              spec.hostPorts,
              fifos !== undefined,
            ).argv,
            env,
            { cwd: '/', detached: true, ...(out ? { stdout: out[0], stderr: out[1] } : {}) },
          )
        : spawn('sh', ['-c', spec.startCommand], {
            cwd: this.dir,
            env,
            detached: true,
            stdio: ['ignore', out?.[0] ?? 'pipe', out?.[1] ?? 'pipe'],
            ...(this.options.user ? { uid: this.options.user.uid, gid: this.options.user.gid } : {}),
          });
    } finally {
      // The app holds its ends now; this process reads through its own.
      for (const fd of out ?? []) LogFifo.closeAppEnd(fd);
    }
    // Read within the app's log budget: past it the pipes pause and the app's writes wait.
    if (!out) {
      this.log.attach(child.stdout!, 'stdout');
      this.readStderr(child.stderr!);
    }
    child.on('error', (error) => this.write(`[slipway] could not start: ${error.message}\n`));
    this.watch(AppProcess.child(child));
    if (c && child.pid) this.joinHost(child.pid, false);
    this.record();
  }

  /** Takes over the running process a previous supervisor started (`pid` as it recorded it). */
  adopt(pid: number, startTime: number): void {
    this.healthySince = Date.now();
    this.watch(AppProcess.adopted(pid, startTime));
    if (this.confinement) this.joinHost(pid, true);
  }

  /** The kernel path: the sandbox's namespace joined to the host (`waitHealthy` waits for it; a restart after a crash says when it failed). */
  private joinHost(rootPid: number, keep: boolean): void {
    const c = this.confinement!;
    const linked = c.sandbox.link(rootPid, this.envPort, this.appPort ?? this.envPort, keep);
    this.linked = linked;
    linked.catch((error: Error) => {
      if (this.linked === linked && !this.stopping) this.write(`[slipway] could not join its sandbox's network to the edge: ${error.message}\n`);
    });
  }

  private watch(process: AppProcess): void {
    this.process = process;
    void process.exited.then((reason) => this.onExit(process, reason));
  }

  private record(): void {
    const process = this.process;
    if (!this.supervision || !process?.pid) return;
    const { records, fifos } = this.supervision;
    records.put({
      releaseId: this.releaseId,
      applicationId: this.applicationId,
      pid: process.pid,
      startTime: process.startTime,
      port: this.envPort,
      ...(this.appPort === undefined ? {} : { appPort: this.appPort }),
      cgroup: this.confinement?.cgroup?.name ?? null,
      sandboxed: this.confinement !== null,
      stdout: fifos.stdout.path,
      stderr: fifos.stderr.path,
    });
  }

  private onExit(process: AppProcess, reason: string): void {
    this.lastExit = reason;
    if (this.process !== process || this.stopping) return;
    this.write(
      process.adopted
        ? '[slipway] process exited (taken over from a previous runtime supervisor: its status is not known)\n'
        : `[slipway] process exited (${reason})\n`,
    );
    // Still starting (waitHealthy reports it), or stopped to start again on another port.
    if (this.healthySince === 0 || this.rerouting) return;
    if (this.spec) {
      this.releaseWatch.crashed(reason, () => this.log.tail());
      return this.scheduleRestart();
    }
    // Adopted and not claimed: without its environment it cannot be started again; the edge's
    // claim (if one comes) starts it afresh.
    void this.stop(0).then(() => this.markGone());
  }

  private scheduleRestart(): void {
    // A process that stayed up a minute starts its backoff afresh.
    if (Date.now() - this.healthySince > 60_000) this.restarts = 0;
    const delay = Math.min((this.options.backoffMs ?? 1000) * 2 ** this.restarts, this.options.maxBackoffMs ?? 30_000);
    this.restarts += 1;
    this.write(`[slipway] restarting in ${delay} ms (restart ${this.restarts})\n`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.spawn();
      this.releaseWatch.restarted();
      this.healthySince = Date.now();
    }, delay);
  }

  /** The edge claims an adopted release (see AdoptedRelease). */
  async claim(spec: ReleaseToRun): Promise<void> {
    if (!this.spec) {
      this.toolchain = await this.toolchainOf(spec);
      this.spec = spec;
      // It died between its adoption and now: start it again, as after any crash.
      if (!this.process?.running && !this.restartTimer && !this.stopping) this.scheduleRestart();
    }
    await this.waitHealthy();
  }

  /**
   * Resolves once the app answers HTTP where it is routed. While it does not, its listening ports
   * decide where that is (once per call): PORT as soon as it listens there, else the one port it
   * listens on instead, once that stayed the only one (PortSearch).
   */
  async waitHealthy(): Promise<void> {
    const timeoutMs = this.options.healthTimeoutMs;
    const search = new PortSearch(this.envPort);
    let deadline = Date.now() + timeoutMs;
    let rerouted = false;
    while (Date.now() < deadline) {
      if (this.stopping || (!this.process?.running && !this.restartTimer)) {
        const taken = rerouted || this.stopping ? undefined : await this.platformPortTaken();
        if (taken === undefined || !this.process)
          throw new UnhealthyReleaseError(`the release exited (${this.lastExit || 'stopped'}) before it answered HTTP on PORT`, this.log.tail());
        await this.reroute(this.process, taken, `could not listen on ${taken}: in its sandbox that port led to the platform's own`);
        rerouted = true;
        deadline = Date.now() + timeoutMs;
        continue;
      }
      const process = this.process;
      const linkFailure = await this.linked?.then(
        () => undefined,
        (error: Error) => error,
      );
      if (linkFailure && process?.running) throw new SandboxUnavailableError(`the edge's path into the sandbox could not be made: ${linkFailure.message}`);
      if (process?.running && (await probe(this.host, this.port))) {
        this.healthySince ||= Date.now();
        return;
      }
      if (!rerouted && process?.running) {
        const to = search.next(await this.listening(process), Date.now());
        if (to !== undefined && to !== (this.appPort ?? this.envPort)) {
          await this.reroute(process, to, to === this.envPort ? `listens on PORT (${to})` : `listens on ${to}, not on PORT (${this.envPort})`);
          rerouted = true;
          // Started again: it has the whole time again.
          deadline = Date.now() + timeoutMs;
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const finding = this.process?.running ? portFinding(await this.listening(this.process), this.envPort) : search.last;
    throw new UnhealthyReleaseError(
      unansweredMessage(this.envPort, this.appPort, finding, Math.round(timeoutMs / 1000), this.confinement ? 'in its sandbox' : 'among its processes'),
      this.log.tail(),
    );
  }

  private listening(process: AppProcess): Promise<number[]> {
    return releaseListeningPorts(process.pid, this.confinement?.cgroup ?? null, this.confinement !== null);
  }

  /**
   * A sandboxed app that exited before it answered because the port it wanted was taken in its
   * sandbox by one the platform forwards there (its API's 3000 on a local install, say): that port,
   * which its next start leaves to it. Undefined for anything else.
   */
  private async platformPortTaken(): Promise<number | undefined> {
    const c = this.confinement;
    if (!c || !this.spec) return undefined;
    await new Promise((r) => setTimeout(r, OUTPUT_SETTLE_MS));
    const port = portInUse(this.log.tail());
    return port !== undefined && port !== this.envPort && c.sandbox.hostPorts(this.spec.hostPorts).includes(port) ? port : undefined;
  }

  /**
   * Routes the release to `to` (PORT, or the one port it wants instead; `why`: what the app did).
   * Unsandboxed, the edge proxies there as it is. Sandboxed, pasta learns its forwarding only when
   * it starts: the sandbox starts again with PORT's host port leading to `to` and no platform port
   * forwarded there (the app's start command runs a second time).
   */
  private async reroute(process: AppProcess, to: number, why: string): Promise<void> {
    this.appPort = to === this.envPort ? undefined : to;
    if (!this.confinement) return this.write(`[slipway] the app ${why}: routed to ${to}\n`);
    this.write(`[slipway] the app ${why}: starting it again with port ${this.envPort} forwarded to ${to} in its sandbox\n`);
    this.rerouting = true;
    try {
      await this.kill(process, 'SIGTERM');
      const timer = setTimeout(() => void this.kill(process, 'SIGKILL'), REROUTE_GRACE_MS);
      await process.exited;
      clearTimeout(timer);
      // Every process of the old sandbox gone (they hold its host port too) before pasta binds it again.
      const cgroup = this.confinement.cgroup;
      for (let i = 0; i < 100 && cgroup && (await cgroup.pids()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      this.rerouting = false;
    }
    if (!this.stopping) this.spawn();
  }

  private kill(process: AppProcess, signal: NodeJS.Signals): Promise<void> {
    // Never a pid that is now someone else's: an adopted process is checked by its start time.
    if (!process.running || (process.adopted && !isSameProcess(process.pid, process.startTime))) return Promise.resolve();
    const c = this.confinement;
    if (c) return c.sandbox.signal(process.pid, c.cgroup, signal);
    try {
      globalThis.process.kill(-process.pid, signal);
    } catch {
      /* gone */
    }
    return Promise.resolve();
  }

  /**
   * Whatever of the app outlived its root process goes with it: everything in its cgroup
   * (`setsid` and double forks included), else its process group (its leader's pid cannot have
   * been reused while the group still has members).
   */
  private async sweep(process: AppProcess | undefined): Promise<void> {
    const cgroup = this.confinement?.cgroup;
    if (cgroup) {
      await cgroup.killAll();
      await cgroup.remove();
    } else if (process?.pid) {
      try {
        globalThis.process.kill(-process.pid, 'SIGKILL');
      } catch {
        /* none left */
      }
    }
  }

  /** SIGTERM, SIGKILL after `graceMs`, then the cleanup; once (a second call waits for the first). */
  stop(graceMs = 5000): Promise<void> {
    this.stopped ??= this.stopOnce(graceMs);
    return this.stopped;
  }

  private async stopOnce(graceMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const process = this.process;
    if (process?.running) {
      await this.kill(process, 'SIGTERM');
      const timer = setTimeout(() => void this.kill(process, 'SIGKILL'), graceMs);
      await process.exited;
      clearTimeout(timer);
    }
    await this.sweep(process);
    await this.log.close();
    if (this.supervision) {
      await Promise.all([this.supervision.fifos.stdout.remove(), this.supervision.fifos.stderr.remove()]);
      this.supervision.records.remove(this.releaseId);
    }
  }
}
