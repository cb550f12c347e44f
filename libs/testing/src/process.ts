import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** A TCP port nobody listens on right now (the OS picks it). */
/** Whether `port` can be listened on (all addresses) right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/** Ports handed out by this process already (each at most once). */
const handedOut = new Set<number>();

/**
 * A port nothing listens on, BELOW the kernel's ephemeral range (32768–60999 by default): a port
 * from that range (what `listen(0)` returns) can be taken as the source port of any outgoing
 * connection on the machine between this check and the service's own listen, and the service then
 * fails with EADDRINUSE — seen as a launched platform exiting at start in CI now and then.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 15_000 + Math.floor(Math.random() * 17_000);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port between 15000 and 32000 after 200 tries');
}

/** Polls `check` until it returns a value other than undefined/false, or the deadline passes. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
  throw new Error(`timed out waiting for ${options.what ?? 'condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`);
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves when a line matching `pattern` appears; rejects if the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

/**
 * The lines of a process's output that usually say why it stopped (a launcher's own lines, "cannot
 * start", crash loops, addresses in use), first in a failure message: CI prints the start of long
 * messages, and the tail is mostly other services' start-up chatter.
 */
function whyLines(output: string): string {
  const lines = output
    .split('\n')
    .filter((line) => /launcher\s*\||cannot start|crash|EADDRINUSE|address already in use|stopping everything|error/i.test(line))
    .slice(-15);
  return lines.length ? `lines that may say why:\n${lines.map((l) => `  ${l.slice(0, 400)}`).join('\n')}\n` : '';
}

/** Starts a real process (own process group) and captures its output. */
export function startProcess(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunningProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
      for (const l of listeners) l();
    }),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    output: () => output,
    exited,
    waitForOutput: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; output so far:\n${output.slice(-4000)}`)),
          timeoutMs,
        );
        const check = () => {
          const match = pattern.exec(output);
          if (match) finish(undefined, match[0]);
          else if (done || child.exitCode !== null)
            finish(new Error(`process exited (${child.exitCode}) before ${pattern}; ${whyLines(output)}output:\n${output.slice(-4000)}`));
        };
        const finish = (error?: Error, value?: string) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve(value!);
        };
        listeners.add(check);
        check();
      }),
    stop: async (signal = 'SIGTERM', timeoutMs = 15_000) => {
      if (done || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` to its end and collects its output; killed (code null, a note on stderr) after
 * `timeoutMs`. Rejects only when it cannot be started at all.
 */
export function runToEnd(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            stderr += `\n(killed: no result within ${options.timeoutMs} ms)`;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Whether a process with this pid still exists (signal 0 asks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pids of this machine's processes whose command line (`cmdline`, arguments NUL-separated)
 * or environment (`environ`) contains `needle`: how a test finds the processes of its own
 * deploy (a marker in its arguments, a canary in its environment) among every other suite's.
 */
export async function processesWith(field: 'cmdline' | 'environ', needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/${field}`, 'latin1').catch(() => '');
    if (text.includes(needle)) found.push(Number(entry));
  }
  return found;
}
