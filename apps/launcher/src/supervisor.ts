import type { HeldSocket } from '@slipway/service-kit';
import { log } from './log.js';
import { killProcessGroup, readiness, startService, stopService, type Readiness, type RunningService, type ServiceSpec } from './services.js';

export interface SupervisionOptions {
  /** First restart delay; doubled for each further crash inside the window, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** More than `maxCrashes` unexpected exits inside `windowMs` is a crash loop: everything stops. */
  maxCrashes: number;
  windowMs: number;
}

export const DEFAULT_SUPERVISION: SupervisionOptions = { firstDelayMs: 100, maxDelayMs: 5000, maxCrashes: 5, windowMs: 60_000 };

/** How an exit reads in the log: the signal (with what SIGKILL usually means) or the code. */
export function exitReason(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal === 'SIGKILL') return 'SIGKILL: killed from outside, e.g. by the kernel when out of memory';
  if (signal) return signal;
  return `code ${code}`;
}

/**
 * Unexpected exits of one service within the window — all its processes together, so N
 * processes of a service that cannot run make one crash loop, not N slow ones.
 */
export class CrashWindow {
  private readonly at: number[] = [];

  constructor(
    readonly service: string,
    private readonly windowMs: number,
  ) {}

  /** Records a crash; how many there were within the window, this one included. */
  add(now = Date.now()): number {
    this.at.push(now);
    while (this.at.length && now - this.at[0]! > this.windowMs) this.at.shift();
    return this.at.length;
  }

  get count(): number {
    return this.at.length;
  }
}

/** What several processes of one service share (`ServiceSpec.processes`). */
export interface ProcessGroupOptions {
  /** The service's crash count (default: this process's own). */
  crashes?: CrashWindow;
  /** The listening sockets the launcher holds for the service, handed to every process. */
  sockets?: readonly HeldSocket[];
  /** How many processes serve the sockets (each gets SLIPWAY_SERVICE_PROCESSES). */
  processes?: number;
}

/**
 * One service under the launcher's watch: an unexpected exit is restarted after a backoff
 * (logged with the reason), and it is announced again once it answers /health/ready. A crash
 * loop — more than `maxCrashes` exits within `windowMs` — calls `onCrashLoop` with one line.
 */
export class SupervisedService {
  current: RunningService;
  private readonly crashes: CrashWindow;
  private stopping = false;
  private timer?: NodeJS.Timeout;
  private restarting?: Promise<void>;
  /** Between an unexpected exit and the restarted process answering ready (announced by itself). */
  recovering = false;
  /** The standby process (specs with `standby`), and whether it has loaded. */
  standby?: RunningService;
  private standbyLoaded = false;

  constructor(
    private readonly root: string,
    readonly spec: ServiceSpec,
    private readonly env: NodeJS.ProcessEnv,
    private readonly options: SupervisionOptions,
    private readonly onCrashLoop: (line: string) => void,
    /** Called with the new process after each restart; resolves once runtime.json names it. */
    private readonly onRestart: () => Promise<void>,
    private readonly group: ProcessGroupOptions = {},
  ) {
    this.crashes = group.crashes ?? new CrashWindow(spec.name, options.windowMs);
    this.current = this.launch();
    if (spec.standby) void this.standbyOnceReady(this.current);
  }

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.current.child.pid;
  }

  private launch(standby = false): RunningService {
    const service = startService(this.root, this.spec, this.env, {
      standby,
      ...(this.group.sockets ? { sockets: this.group.sockets } : {}),
      ...(this.group.processes ? { processes: this.group.processes } : {}),
    });
    void service.exited.then(({ code, signal }) => {
      this.clearGroup(service);
      return service === this.standby ? this.onStandbyExit(code, signal) : this.onExit(service, code, signal);
    });
    return service;
  }

  /**
   * Before anything is restarted, nothing of the old instance is left: SIGKILL to the exited
   * process's whole group (its own, it was started detached), so no child it started — a worker,
   * a helper, a stray shell — survives it and holds a port or a file. The runtime supervisor's
   * apps and nginx are meant to outlive it; they run in process groups (and cgroups) of their
   * own, so this never reaches them.
   */
  private clearGroup(service: RunningService): void {
    if (this.stopping || service.child.pid === undefined) return;
    if (killProcessGroup(service.child.pid)) log('launcher', `${this.name}: killed what was left of its old process group (pgid ${service.child.pid})`);
  }

  /** /health/ready of the service's port, and — when the port is shared — whether this very process accepts on it yet. */
  async readiness(service: RunningService = this.current): Promise<Readiness> {
    if (!service.listened()) return { ok: false, detail: 'not accepting on the shared socket yet' };
    return readiness(this.spec);
  }

  /** Starts the standby once `service` is ready (not before: it would compete with start-up for the CPU). */
  private async standbyOnceReady(service: RunningService): Promise<void> {
    const deadline = Date.now() + 5 * 60_000;
    while (!this.stopping && service === this.current && Date.now() < deadline) {
      if ((await this.readiness(service)).ok) return this.startStandby();
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private startStandby(): void {
    if (this.stopping || this.standby) return;
    const standby = this.launch(true);
    this.standby = standby;
    this.standbyLoaded = false;
    void standby.loaded?.then(() => {
      if (this.standby === standby) this.standbyLoaded = true;
    });
    void this.onRestart();
  }

  private onStandbyExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.standby = undefined;
    this.standbyLoaded = false;
    if (this.stopping) return;
    // A standby that keeps dying means the edge cannot start either: it counts towards the crash loop.
    const crashes = this.crashes.add();
    if (crashes > this.options.maxCrashes) {
      this.onCrashLoop(
        `the standby ${this.name} crashed ${crashes} times within ${Math.round(this.options.windowMs / 1000)} s (last: ${exitReason(code, signal)}): stopping everything`,
      );
      return;
    }
    log('launcher', `the standby ${this.name} exited (${exitReason(code, signal)}); starting another in 5 s`);
    void this.onRestart();
    this.timer = setTimeout(() => this.startStandby(), 5000);
  }

  /** The crashed process's standby takes its place at once (SIGUSR2: it connects and listens). */
  private promoteStandby(reason: string, downSince: number): boolean {
    const next = this.standby;
    if (!next || !this.standbyLoaded || next.child.exitCode !== null || next.child.signalCode !== null) return false;
    this.standby = undefined;
    this.standbyLoaded = false;
    next.child.kill('SIGUSR2');
    this.current = next;
    log(
      'launcher',
      `${this.name} exited unexpectedly (${reason}); its standby (pid ${next.child.pid}) takes over (crash ${this.crashes.count} of at most ${this.options.maxCrashes} per ${Math.round(this.options.windowMs / 1000)} s)`,
    );
    const published = this.onRestart();
    this.restarting = this.announceReady(next, downSince, published).then(() => this.startStandby());
    return true;
  }

  private onExit(service: RunningService, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || service !== this.current) return;
    const now = Date.now();
    const reason = exitReason(code, signal);
    const crashes = this.crashes.add(now);
    if (crashes > this.options.maxCrashes) {
      const last = this.crashes.service === this.name ? reason : `${this.name}, ${reason}`;
      this.onCrashLoop(
        `${this.crashes.service} crashed ${crashes} times within ${Math.round(this.options.windowMs / 1000)} s (last: ${last}); not restarting it again: stopping everything`,
      );
      return;
    }
    this.recovering = true;
    if (this.promoteStandby(reason, now)) return;
    const delay = Math.min(this.options.firstDelayMs * 2 ** (crashes - 1), this.options.maxDelayMs);
    log(
      'launcher',
      `${this.name} exited unexpectedly (${reason}); restarting in ${delay} ms (crash ${crashes} of at most ${this.options.maxCrashes} per ${Math.round(this.options.windowMs / 1000)} s)`,
    );
    this.timer = setTimeout(() => {
      if (this.stopping) return;
      this.current = this.launch();
      const published = this.onRestart();
      this.restarting = this.announceReady(this.current, now, published).then(() => (this.spec.standby ? this.startStandby() : undefined));
    }, delay);
  }

  /** Logs when the restarted process answers /health/ready, or which dependency keeps it from it. */
  private async announceReady(service: RunningService, downSince: number, published: Promise<void> = Promise.resolve()): Promise<void> {
    let lastReport = '';
    let reportedAt = Date.now();
    while (!this.stopping && service === this.current && service.child.exitCode === null && service.child.signalCode === null) {
      const ready = await this.readiness(service);
      if (ready.ok) {
        this.recovering = false;
        await published;
        log('launcher', `${this.name} is back (pid ${service.child.pid}): ready ${((Date.now() - downSince) / 1000).toFixed(1)} s after it went down`);
        return;
      }
      // Say what it waits for (a dependency named by its /health/ready), at most every 10 s.
      if (ready.detail && (ready.detail !== lastReport || Date.now() - reportedAt > 10_000)) {
        log('launcher', `${this.name} restarted but not ready yet: ${ready.detail}`);
        lastReport = ready.detail;
        reportedAt = Date.now();
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await Promise.all([stopService(this.current), this.standby ? stopService(this.standby) : undefined]);
    await this.restarting?.catch(() => undefined);
  }
}
