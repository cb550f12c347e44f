import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { log, pipeLines } from './log.js';

export interface ServiceSpec {
  name: string;
  port: number;
  /** Path of the built entry point, relative to the repository root. */
  entry: string;
}

export interface RunningService extends ServiceSpec {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a built service in its own process group, its output prefixed with its name. */
export function startService(root: string, spec: ServiceSpec, env: NodeJS.ProcessEnv): RunningService {
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, spec.entry)], {
    cwd: root,
    env: { ...env, PORT: String(spec.port), SLIPWAY_LAUNCHER_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  pipeLines(spec.name, child.stdout!);
  pipeLines(spec.name, child.stderr!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { ...spec, child, exited };
}

/** SIGTERM, then SIGKILL to the whole process group after `graceMs`. */
export async function stopService(service: RunningService, graceMs = 10_000): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
  };
  signalGroup('SIGTERM');
  const timer = setTimeout(() => {
    log('launcher', `${service.name} did not stop within ${graceMs / 1000}s; killing it`);
    signalGroup('SIGKILL');
  }, graceMs);
  await service.exited;
  clearTimeout(timer);
  signalGroup('SIGKILL');
}

export async function isReady(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}
