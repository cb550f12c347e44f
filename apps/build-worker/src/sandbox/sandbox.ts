import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface RunOptions {
  /** Host directory of the project; it is `/workspace` inside the sandbox. */
  workspace: string;
  command: string;
  /** The whole environment the command sees (nothing is inherited). */
  env: Record<string, string>;
  /** Whether the command may reach the network (installs: the npm registry). */
  network: boolean;
  /** Host directory mounted at `/cache` (the application's package-manager cache). */
  cacheDir?: string;
  timeoutMs: number;
  outputLimitBytes: number;
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
  outputExceeded: boolean;
  aborted: boolean;
}

export type SandboxMode = { kind: 'bwrap'; uid: number; gid: number } | { kind: 'none'; reason: string };

const SYSTEM_BINDS = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/ssl', '/etc/ca-certificates', '/etc/passwd', '/etc/group'];

/** bubblewrap arguments: read-only system, the workspace at /workspace, nothing else of the host. */
export function bwrapArgs(options: Pick<RunOptions, 'workspace' | 'network' | 'cacheDir' | 'env'>): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--ro-bind', '/usr', '/usr'];
  if (options.network) args.push('--share-net');
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) if (existsSync(`/usr/${link}`)) args.push('--symlink', `usr/${link}`, `/${link}`);
  for (const path of SYSTEM_BINDS) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', options.workspace, '/workspace');
  if (options.cacheDir) args.push('--bind', options.cacheDir, '/cache');
  args.push('--chdir', '/workspace', '--clearenv');
  for (const [key, value] of Object.entries(options.env)) args.push('--setenv', key, value);
  return args;
}

/** Runs a shell command in the sandbox (or, without one, in its own process group with a clean env). */
export class Sandbox {
  constructor(readonly mode: SandboxMode) {}

  /** Paths inside the command's view of the world. */
  get paths(): { workspace: string; cache: (hostCache: string) => string } {
    return this.mode.kind === 'bwrap' ? { workspace: '/workspace', cache: () => '/cache' } : { workspace: '', cache: (host) => host };
  }

  run(options: RunOptions): Promise<RunResult> {
    const sandboxed = this.mode.kind === 'bwrap';
    const env = { ...options.env };
    const [command, args] = sandboxed ? ['bwrap', [...bwrapArgs({ ...options, env }), 'sh', '-c', options.command]] : ['sh', ['-c', options.command]];
    const child = spawn(command, args, {
      cwd: options.workspace,
      env: sandboxed ? {} : env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(this.mode.kind === 'bwrap' ? { uid: this.mode.uid, gid: this.mode.gid } : {}),
    });
    let output = '';
    let total = 0;
    let timedOut = false;
    let outputExceeded = false;
    let aborted = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      output += chunk.toString('utf8');
      if (output.length > 128_000) output = output.slice(-64_000);
      if (total > options.outputLimitBytes && !outputExceeded) {
        outputExceeded = true;
        killGroup();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise((resolve) => {
      child.on('error', (error) => {
        output += `\n${error.message}\n`;
      });
      child.on('close', (exitCode, signal) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        // Anything the command left running in its group goes too.
        killGroup();
        resolve({ exitCode, signal, output, timedOut, outputExceeded, aborted });
      });
    });
  }
}
