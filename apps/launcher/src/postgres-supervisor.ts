import { spawn, type ChildProcess } from 'node:child_process';
import { StartupError, oneLine, pingPostgres } from './errors.js';
import { log } from './log.js';
import { isPortFree } from './ports.js';
import { clearOldInstance, type Cleared } from './postgres-leftovers.js';
import { DEFAULT_SUPERVISION, exitReason, type SupervisionOptions } from './supervisor.js';

/** How to run the embedded server: the binary, its data directory and flags, and as whom. */
export interface PostgresServer {
  binary: string;
  dataDir: string;
  port: number;
  /** Further `postgres` flags (`-c name=value`). */
  flags: string[];
  /** As root: the `postgres` user (Postgres refuses to run as root). */
  user?: { uid: number; gid: number };
  /** A superuser URL on this server, to tell when it accepts connections. */
  url: string;
}

export interface PostgresSupervision {
  /** Called with the new postmaster after each restart; resolves once runtime.json names it. */
  onRestart(): Promise<void>;
  /** More than `maxCrashes` unexpected exits within `windowMs`: one line, and everything stops. */
  onCrashLoop(line: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The embedded Postgres under the launcher's watch, like its services: an unexpected exit of the
 * postmaster is logged with its reason, whatever is left of that instance is killed (backends
 * still attached to its shared memory would make the next postmaster refuse to start), and a new
 * postmaster is started on the same data directory after a backoff — it recovers from its WAL by
 * itself. A crash loop (more than `maxCrashes` exits within `windowMs`) calls `onCrashLoop`.
 *
 * The postmaster runs in a session of its own (detached): a terminal's Ctrl-C reaches it only
 * through the launcher, which stops it last, after the services that use it.
 */
export class PostgresSupervisor {
  private child!: ChildProcess;
  private output: string[] = [];
  private readonly crashes: number[] = [];
  private stopping = false;
  /** Set once the first postmaster answered: before that an exit is a StartupError, not a crash. */
  private supervised = false;
  private restarting?: Promise<void>;
  private readonly onExitHook = () => this.child && this.running(this.child) && signal(this.child, 'SIGINT');

  private constructor(
    private readonly server: PostgresServer,
    private readonly supervision?: PostgresSupervision,
    private readonly options: SupervisionOptions = DEFAULT_SUPERVISION,
  ) {}

  /**
   * Clears what an earlier launcher left of this data directory's instance, starts the postmaster
   * and waits until it accepts connections (as long as its recovery takes; a postmaster that exits
   * meanwhile is a StartupError with its last line).
   */
  static async start(server: PostgresServer, supervision?: PostgresSupervision, options?: SupervisionOptions): Promise<PostgresSupervisor> {
    const supervisor = new PostgresSupervisor(server, supervision, options);
    reportCleared(await clearOldInstance(server.dataDir), 'an earlier launcher');
    if (!(await isPortFree(server.port))) {
      throw new StartupError(
        `port ${server.port} for the embedded Postgres is taken; set SLIPWAY_PG_PORT to a free port, or DATABASE_URL to a running Postgres`,
      );
    }
    const child = supervisor.launch();
    const failure = await supervisor.waitUntilAnswering(child);
    if (failure) {
      supervisor.stopping = true;
      signal(child, 'SIGKILL');
      throw new StartupError(
        `the embedded Postgres did not start on 127.0.0.1:${server.port} (${supervisor.lastLine() || failure}); set SLIPWAY_DEBUG=1 to see its log`,
      );
    }
    supervisor.supervised = true;
    // A forced exit of the launcher (a second Ctrl-C) must not leave a detached postmaster behind.
    process.once('exit', supervisor.onExitHook);
    return supervisor;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private running(child: ChildProcess): boolean {
    return child.exitCode === null && child.signalCode === null;
  }

  /** Its last FATAL or PANIC line (else its last line), without the timestamp and pid prefix. */
  private lastLine(): string {
    const line = this.output.findLast((l) => /\b(FATAL|PANIC):/.test(l)) ?? this.output.at(-1) ?? '';
    return line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '').replace(/\s+/g, ' ');
  }

  private launch(): ChildProcess {
    const { binary, dataDir, port, flags, user } = this.server;
    const child = spawn(binary, ['-D', dataDir, '-p', String(port), ...flags], {
      ...(user ?? {}),
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.output = [];
    collect(child, this.output);
    child.once('exit', (code, signalName) => this.onExit(child, code, signalName));
    return child;
  }

  private onExit(child: ChildProcess, code: number | null, signalName: NodeJS.Signals | null): void {
    if (this.stopping || !this.supervised || child !== this.child || !this.supervision) return;
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length && now - this.crashes[0]! > this.options.windowMs) this.crashes.shift();
    // Its own last words say why when it stopped by itself (a FATAL or PANIC line); a signal says it all.
    const said = signalName === null && this.lastLine() ? `: ${this.lastLine()}` : '';
    const reason = `${exitReason(code, signalName)}${said}`;
    const perWindow = `${this.options.maxCrashes} per ${Math.round(this.options.windowMs / 1000)} s`;
    if (this.crashes.length > this.options.maxCrashes) {
      this.supervision.onCrashLoop(
        `postgres crashed ${this.crashes.length} times within ${Math.round(this.options.windowMs / 1000)} s (last: ${reason}); not restarting it again: stopping everything`,
      );
      return;
    }
    const delay = Math.min(this.options.firstDelayMs * 2 ** (this.crashes.length - 1), this.options.maxDelayMs);
    log(
      'launcher',
      `postgres exited unexpectedly (${reason}); restarting in ${delay} ms once nothing of it is left (crash ${this.crashes.length} of at most ${perWindow})`,
    );
    this.restarting = this.restart(now, delay);
  }

  /** Kills what is left of the old instance, waits out the backoff, starts a new postmaster and says when it answers. */
  private async restart(downSince: number, delay: number): Promise<void> {
    const started = Date.now();
    reportCleared(await clearOldInstance(this.server.dataDir), 'the postgres that went down');
    await sleep(Math.max(0, delay - (Date.now() - started)));
    if (this.stopping) return;
    const next = this.launch();
    const published = this.supervision!.onRestart();
    const failure = await this.waitUntilAnswering(next, true);
    await published;
    if (failure === undefined && next === this.child && !this.stopping)
      log('launcher', `postgres is back (pid ${next.pid}): ready ${((Date.now() - downSince) / 1000).toFixed(1)} s after it went down`);
  }

  /**
   * Polls until the server accepts a connection (crash recovery may take a while: no deadline while
   * the postmaster runs). Returns why it did not, once the postmaster exited (or the launcher stops).
   * `report`: say what it waits for, at most every 10 s.
   */
  private async waitUntilAnswering(child: ChildProcess, report = false): Promise<string | undefined> {
    let lastReport = '';
    let reportedAt = Date.now();
    for (;;) {
      try {
        await pingPostgres(this.server.url, 1000);
        return undefined;
      } catch (error) {
        if (!this.running(child)) return `exited with ${exitReason(child.exitCode, child.signalCode)}`;
        if (this.stopping) return 'stopping';
        const why = oneLine(error);
        if (report && Date.now() - reportedAt > 10_000 && why !== lastReport) {
          log('launcher', `postgres restarted but not ready yet: ${why}`);
          lastReport = why;
          reportedAt = Date.now();
        }
        await sleep(100);
      }
    }
  }

  /**
   * Postgres's fast shutdown (SIGINT: clients disconnected, a checkpoint, exit); an immediate
   * shutdown (SIGQUIT) if that takes more than 20 s, SIGKILL and a clearing of leftovers after 5 s more.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    process.off('exit', this.onExitHook);
    const child = this.child;
    if (this.running(child)) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      signal(child, 'SIGINT');
      const quit = setTimeout(() => signal(child, 'SIGQUIT'), 20_000);
      const kill = setTimeout(() => signal(child, 'SIGKILL'), 25_000);
      await exited;
      clearTimeout(quit);
      clearTimeout(kill);
    }
    await this.restarting?.catch(() => undefined);
    reportCleared(await clearOldInstance(this.server.dataDir), 'the stopped postgres');
  }
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    child.kill(name);
  } catch {
    /* already gone */
  }
}

function reportCleared(cleared: Cleared, whose: string): void {
  if (cleared.postmaster) log('launcher', `stopped the postgres an earlier launcher left running (pid ${cleared.postmaster})`);
  if (cleared.attached.length)
    log('launcher', `killed ${cleared.attached.length} process(es) of ${whose} still attached to its shared memory (pids ${cleared.attached.join(', ')})`);
  if (cleared.stuck.length)
    log('launcher', `processes of ${whose} still hold its shared memory (pids ${cleared.stuck.join(', ')}); Postgres will refuse to start until they are gone`);
}

/** Keeps its last lines for messages (all of them logged with SLIPWAY_DEBUG). */
function collect(child: ChildProcess, tail: string[]): void {
  const debug = Boolean(process.env['SLIPWAY_DEBUG']);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = chunk
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      tail.push(...lines);
      tail.splice(0, Math.max(0, tail.length - 20));
      if (debug) for (const line of lines) log('postgres', line);
    });
  }
}
