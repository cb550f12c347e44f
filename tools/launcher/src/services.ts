import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { log, pipeLines } from './log.js';

export interface ServiceSpec {
  name: string;
  port: number;
  /** Path of the built entry point, relative to the repository root. */
  entry: string;
  /** Readiness other than `GET :port/health/ready` (a process without an HTTP port). */
  ready?: () => Promise<Readiness>;
  /**
   * Keep a standby process beside it (started with `SLIPWAY_EDGE_STANDBY=1`: modules loaded, not
   * listening) that takes over at once when it dies; the line the standby prints once loaded.
   */
  standby?: RegExp;
}

export interface Readiness {
  ok: boolean;
  /** What is down, from the service's own /health/ready report (`redis down: …`), or why it did not answer. */
  detail?: string;
  /** Siblings the (ready) service reports down, e.g. `build-worker down (no build worker is consuming …)`. */
  siblingsDown?: string;
}

export interface RunningService extends ServiceSpec {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** A standby: resolves once it printed `spec.standby` (loaded, ready to take over). */
  loaded?: Promise<void>;
}

/** Starts a built service in its own process group, its output prefixed with its name. */
export function startService(root: string, spec: ServiceSpec, env: NodeJS.ProcessEnv, options: { standby?: boolean } = {}): RunningService {
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, spec.entry)], {
    cwd: root,
    env: { ...env, PORT: String(spec.port), SLIPWAY_LAUNCHER_PID: String(process.pid), ...(options.standby ? { SLIPWAY_EDGE_STANDBY: '1' } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let onLoaded = () => undefined as void;
  const loaded = options.standby && spec.standby ? new Promise<void>((resolve) => (onLoaded = resolve)) : undefined;
  const onLine = loaded ? (line: string) => (spec.standby!.test(line) ? onLoaded() : undefined) : undefined;
  pipeLines(spec.name, child.stdout!, onLine);
  pipeLines(spec.name, child.stderr!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { ...spec, child, exited, ...(loaded ? { loaded } : {}) };
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

interface ReadyReport {
  checks?: Record<string, { status?: string; error?: string }>;
  siblings?: Record<string, { status?: string; error?: string }>;
}

function down(entries: ReadyReport['checks']): string[] {
  return Object.entries(entries ?? {})
    .filter(([, check]) => check.status === 'down')
    .map(([name, check]) => `${name} down${check.error ? ` (${check.error.slice(0, 200)})` : ''}`);
}

/** `/health/ready` of the service, with the names of the dependencies or siblings it reports down. */
export async function readiness(spec: ServiceSpec): Promise<Readiness> {
  if (spec.ready) return spec.ready();
  try {
    const response = await fetch(`http://127.0.0.1:${spec.port}/health/ready`, { signal: AbortSignal.timeout(2000) });
    const report = (await response.json().catch(() => ({}))) as ReadyReport;
    if (response.status === 200) {
      const siblings = down(report.siblings);
      return siblings.length ? { ok: true, siblingsDown: siblings.join(', ') } : { ok: true };
    }
    const checks = down(report.checks);
    return { ok: false, detail: checks.length ? checks.join(', ') : `/health/ready answered ${response.status}` };
  } catch {
    return { ok: false };
  }
}

/** The runtime supervisor answers a ping on its socket (it has no HTTP port). */
export function supervisorReady(socketPath: string): Promise<Readiness> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (ready: Readiness) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ready);
    };
    const timer = setTimeout(() => done({ ok: false, detail: 'no answer on its socket within 2 s' }), 2000);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write('{"id":1,"op":"ping"}\n'));
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\n')) done({ ok: /"ok":true/.test(answer) });
    });
    socket.on('error', () => done({ ok: false }));
  });
}
