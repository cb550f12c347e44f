import { spawn, type ChildProcess } from 'node:child_process';
import { sandboxArgv, spawnSandbox, tool } from '@slipway/sandbox';
import { MANAGER_PATH, TOOLCHAIN_PATH } from '@slipway/toolchains';
import type { BuildLimits, CommandLimits, CommandUsage } from './build-limits.js';

export interface RunOptions {
  /** Host directory of the project; it is `/workspace` inside the sandbox. */
  workspace: string;
  command: string;
  /** The whole environment the command sees (nothing is inherited). */
  env: Record<string, string>;
  /** Host directory mounted at `/cache` (the application's package-manager cache). */
  cacheDir?: string;
  /** Host directory of the project's Node.js toolchain, mounted read-only at `TOOLCHAIN_PATH`; absent: the platform's Node in /usr. */
  toolchainDir?: string;
  /** Host directory of the project's package manager (pnpm, yarn, bun, or a pinned npm), read-only at `MANAGER_PATH`. */
  managerDir?: string;
  timeoutMs: number;
  outputLimitBytes: number;
  signal?: AbortSignal;
  /** Each chunk of output as it arrives (a live feed), besides the tail kept in `output`. */
  onOutput?: (chunk: Buffer) => void;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
  outputExceeded: boolean;
  aborted: boolean;
  /** What the command used of its cgroup (null under rlimits only). */
  usage: CommandUsage | null;
}

/** `bwrap`: sandboxed as the build user; `none`: BUILD_SANDBOX=off, the operator's explicit choice. */
export type SandboxMode = { kind: 'bwrap'; uid: number; gid: number } | { kind: 'none'; reason: string };

/** Size of the sandbox's private, memory-backed `/tmp` (also `HOME`). */
export const BUILD_TMP_BYTES = 1024 * 1024 * 1024;

/**
 * The command line of a sandboxed install or build: `pasta … -- bwrap …` (libs/sandbox
 * sandbox-argv): its own network namespace whose only way out is pasta's user-mode
 * TCP/UDP to the outside world, with no port of the host forwarded and `--no-map-gw`, so
 * 127.0.0.1 is the sandbox's own loopback and nothing of the host's (Redis, Postgres, the
 * platform's ports) is reachable; bubblewrap's namespaces, read-only `/usr`, the workspace at
 * `/workspace` and the cache at `/cache`, nothing else of the host's files.
 */
export function buildArgv(
  ids: { uid: number; gid: number },
  options: Pick<RunOptions, 'workspace' | 'cacheDir' | 'toolchainDir' | 'managerDir' | 'env' | 'command'>,
  path?: string,
): string[] {
  // Started as root (the worker), setpriv drops to the build user with no capability left, after
  // the entry shell put it into its cgroup; a worker that is not root already is that user.
  const drop = process.getuid?.() === 0 ? [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'] : [];
  // pasta does not die with its parent: if the worker is killed (-9), the kernel kills pasta, and
  // bubblewrap's --die-with-parent then the build, instead of leaving it running unwatched.
  return [
    tool('setpriv', path),
    ...drop,
    '--pdeathsig',
    'SIGKILL',
    '--',
    ...sandboxArgv(
      {
        ...ids,
        binds: [
          { host: options.workspace, path: '/workspace', writable: true },
          ...(options.cacheDir ? [{ host: options.cacheDir, path: '/cache', writable: true }] : []),
          ...(options.toolchainDir ? [{ host: options.toolchainDir, path: TOOLCHAIN_PATH }] : []),
          ...(options.managerDir ? [{ host: options.managerDir, path: MANAGER_PATH }] : []),
        ],
        tmpBytes: BUILD_TMP_BYTES,
        env: options.env,
        cwd: '/workspace',
        network: { kind: 'outbound' },
        command: options.command,
      },
      path,
    ),
  ];
}

/**
 * Runs a shell command in the sandbox (or, with BUILD_SANDBOX=off, in its own process group with a
 * clean env), always inside the build limits: its own cgroup, or rlimits by the operator's choice.
 */
export class Sandbox {
  /** `path`: where pasta and bwrap are found (the worker's PATH). */
  constructor(
    readonly mode: SandboxMode,
    readonly limits: BuildLimits,
    private readonly path = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  ) {}

  async run(options: RunOptions): Promise<RunResult> {
    const result = await this.runOnce(options);
    // Nothing here sends SIGTERM/SIGINT/SIGHUP to a command's group: such a death is a signal meant
    // for the worker's own group that arrived while the command was being spawned (before it left
    // the group), so the command never started. Run it again.
    const stray = result.signal === 'SIGTERM' || result.signal === 'SIGINT' || result.signal === 'SIGHUP';
    return stray && !result.timedOut && !result.outputExceeded && !result.aborted ? this.runOnce(options) : result;
  }

  /** The command's first process, inside `limits` (the entry shell joins the cgroup, then becomes the build user). */
  private spawnLimited(options: RunOptions, limits: CommandLimits): ChildProcess {
    const mode = this.mode;
    // pasta is never left running as root: setpriv makes it the build user, whose namespaces it
    // makes. The command's environment reaches bubblewrap on a pipe, never on a command line.
    if (mode.kind === 'bwrap')
      return spawnSandbox(limits.wrap(buildArgv(mode, options, this.path)), options.env, { cwd: options.workspace, detached: true, path: this.path });
    const [file, ...args] = limits.wrap(['/bin/sh', '-c', options.command]);
    return spawn(file!, args, { cwd: options.workspace, env: { ...options.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  private async runOnce(options: RunOptions): Promise<RunResult> {
    // Made before the first process of the command: nothing of it ever runs outside the limits.
    const limits = await this.limits.forCommand();
    const child = this.spawnLimited(options, limits);
    let output = '';
    let total = 0;
    let timedOut = false;
    let outputExceeded = false;
    let aborted = false;
    const killAll = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      // The process group misses what left it (setsid); the cgroup holds everything.
      void limits.kill();
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      output += chunk.toString('utf8');
      if (!outputExceeded) options.onOutput?.(chunk);
      if (output.length > 128_000) output = output.slice(-64_000);
      if (total > options.outputLimitBytes && !outputExceeded) {
        outputExceeded = true;
        killAll();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killAll();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // The command is over when its first process exits: what it left running (a `setsid` child
    // holding the output pipe open) is killed then, so the output closes and the step ends.
    const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    const closed = new Promise<void>((resolve) => {
      child.on('error', (error) => {
        output += `\n${error.message}\n`;
        resolve();
      });
      child.on('close', () => resolve());
    });
    const { exitCode, signal } = await Promise.race([exited, closed.then(() => ({ exitCode: child.exitCode, signal: child.signalCode }))]);
    const usage = await limits.finish();
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await closed;
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    return { exitCode, signal, output, timedOut, outputExceeded, aborted, usage };
  }
}
