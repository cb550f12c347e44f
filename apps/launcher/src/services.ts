import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { LISTEN_FDS_ENV, listenFdsValue, type HeldSocket } from '@slipway/service-kit';
import { log, pipeLines } from './log.js';

/** A listening socket the launcher holds for a service, handed to it by role (`SLIPWAY_LISTEN_FDS`). */
export interface SocketSpec {
  /** The role the service knows it by: `http`, `edge`, `edge-https`. */
  name: string;
  host: string;
  port: number;
}

export interface ServiceSpec {
  name: string;
  port: number;
  /**
   * Listening sockets the launcher opens once and holds for the service's whole life, handed to
   * each of its processes as descriptors 3, 4, … (`SLIPWAY_LISTEN_FDS=http=3`): a process that
   * dies leaves the port open and its backlog to the others, or to its replacement.
   */
  sockets?: SocketSpec[];
  /** Independent processes serving the same sockets (default 1): the first is named `name`, the others `name-2`, … */
  processes?: number;
  /**
   * The line a process prints once it accepts on the held socket. With several processes the
   * port answers as soon as any of them does, so a restarted one is "back" once it printed this
   * (and the port answers /health/ready).
   */
  listening?: RegExp;
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
  /** Whether it printed `spec.listening` yet (always true for a spec without it). */
  listened: () => boolean;
}

export interface StartOptions {
  standby?: boolean;
  /** The service's held sockets, in the order of `spec.sockets`. */
  sockets?: readonly HeldSocket[];
  /** How many processes of the service share the sockets (`SLIPWAY_SERVICE_PROCESSES`: budgets are divided by it). */
  processes?: number;
}

/** Starts a built service in its own process group, its output prefixed with its name. */
export function startService(root: string, spec: ServiceSpec, env: NodeJS.ProcessEnv, options: StartOptions = {}): RunningService {
  const sockets = options.sockets ?? [];
  const child = spawn(process.execPath, ['--enable-source-maps', join(root, spec.entry)], {
    cwd: root,
    env: {
      ...env,
      PORT: String(spec.port),
      SLIPWAY_LAUNCHER_PID: String(process.pid),
      ...(sockets.length ? { [LISTEN_FDS_ENV]: listenFdsValue((spec.sockets ?? []).map((s) => s.name)) } : {}),
      ...(options.processes && options.processes > 1 ? { SLIPWAY_SERVICE_PROCESSES: String(options.processes) } : {}),
      ...(options.standby ? { SLIPWAY_EDGE_STANDBY: '1' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe', ...sockets.map((s) => s.fd)],
    detached: true,
  });
  let onLoaded = () => undefined as void;
  const loaded = options.standby && spec.standby ? new Promise<void>((resolve) => (onLoaded = resolve)) : undefined;
  let listening = !spec.listening;
  const onLine = (line: string) => {
    if (loaded && spec.standby!.test(line)) onLoaded();
    if (!listening && spec.listening!.test(line)) listening = true;
  };
  pipeLines(spec.name, child.stdout!, onLine);
  pipeLines(spec.name, child.stderr!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { ...spec, child, exited, listened: () => listening, ...(loaded ? { loaded } : {}) };
}

/**
 * SIGKILL to the whole process group of a service process that exited (it was started detached:
 * its group id is its pid), so no child of the old instance outlives it. Returns whether anything
 * of the group was still there.
 */
export function killProcessGroup(pgid: number): boolean {
  try {
    process.kill(-pgid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
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
