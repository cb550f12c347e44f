import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import {
  DEFAULT_LOG_LIMITS,
  UnhealthyReleaseError,
  readLogRing,
  readLogRingEndSync,
  type ReleaseToRun,
  type RunningRelease,
  type RuntimeDriver,
  type RuntimeReport,
} from '@slipway/runtime';
import { SandboxUnavailableError } from '@slipway/sandbox';
import { readLines, send, type RunningInfo, type SupervisorAnswer, type SupervisorError, type SupervisorRequest } from './protocol.js';

const LOG_TAIL_BYTES = 16_000;

function toError(error: SupervisorError): Error {
  if (error.kind === 'unhealthy') return new UnhealthyReleaseError(error.message, error.logTail);
  if (error.kind === 'sandbox') return new SandboxUnavailableError(error.message);
  return new Error(error.message);
}

type Request = SupervisorRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
type Pending = { request: Request; resolve: (answer: SupervisorAnswer) => void };

/** What the edge asked the supervisor to run, and where it came up (checked when it is claimed again). */
interface Claim {
  spec: ReleaseToRun;
  port?: number;
  host?: string;
}

/**
 * `start` and `stop` mean the same to a restarted supervisor, and `report` only reads (the
 * first-minute watch's read at the end of its window is not lost to a reconnect): asked again,
 * not failed, across a reconnect.
 */
const resendable = (request: Request) => request.op === 'start' || request.op === 'stop' || request.op === 'report';

/** Connects, retrying every 100 ms while nobody listens yet (the supervisor starting), until `deadline`. */
async function open(socketPath: string, deadline: number): Promise<Socket> {
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(socketPath);
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      });
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the runtime supervisor at ${socketPath} does not answer: ${(error as Error).message}`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The `local` runtime driver when the launcher runs a runtime supervisor
 * (`RUNTIME_SUPERVISOR_SOCKET`): releases run under the supervisor, not this edge, so they
 * outlive an edge crash; `start` of a release the supervisor already runs hands it back at once
 * (how a restarted edge re-adopts its apps).
 *
 * The supervisor's apps outlive the supervisor too. When the connection closes, this driver
 * connects to the restarted supervisor by itself and claims every release it runs again (`start`
 * with the same ReleaseToRun: the new supervisor hands back the running process, now with its
 * environment for crash restarts); requests in flight (`start`, `stop`) are asked again. Only when
 * no supervisor answers within `timeoutMs`, or a release comes back other than it was (a new port),
 * is `onLost` called: the edge exits, and its restart starts the apps anew.
 */
export class RemoteRuntimeDriver implements RuntimeDriver {
  readonly name = 'local' as const;
  private readonly logger = new Logger('edge');
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** The releases this edge runs through the supervisor (started, not stopped), and their ports once known. */
  private readonly claims = new Map<string, Claim>();
  private socket?: Socket;
  private lostAt?: number;
  private closing = false;
  /** Past the first answer: from then on a closed connection is reconnected. */
  private connected = false;

  private constructor(
    private readonly socketPath: string,
    private readonly dir: string,
    private readonly logFiles: number,
    private readonly timeoutMs: number,
    private readonly onLost: (reason: string) => void,
  ) {}

  /** Connects, retrying while the supervisor starts (up to `timeoutMs`, also the bound for each reconnect). */
  static async connect(
    socketPath: string,
    dir: string,
    timeoutMs: number,
    onLost: (reason: string) => void,
    logFiles = DEFAULT_LOG_LIMITS.files,
  ): Promise<RemoteRuntimeDriver> {
    const driver = new RemoteRuntimeDriver(socketPath, dir, logFiles, timeoutMs, onLost);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      driver.attach(await open(socketPath, deadline));
      try {
        await driver.call({ op: 'ping' });
        driver.connected = true;
        return driver;
      } catch (error) {
        // Connected to a supervisor on its way out: try again until the deadline.
        driver.socket?.removeAllListeners('close');
        driver.socket?.destroy();
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    readLines(socket, (message) => {
      const answer = message as SupervisorAnswer;
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      waiting?.resolve(answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.onClose(socket));
  }

  private onClose(socket: Socket): void {
    if (this.closing || socket !== this.socket) return;
    if (this.connected) this.lostAt ??= Date.now();
    for (const [id, waiting] of this.pending) {
      if (this.connected && resendable(waiting.request)) continue;
      this.pending.delete(id);
      waiting.resolve({ id, ok: false, error: { kind: 'other', message: 'the runtime supervisor went away' } });
    }
    if (!this.connected) return; // connect() tries again
    this.logger.warn(`the connection to the runtime supervisor closed: reconnecting (its apps keep running; ${this.claims.size} release(s) to claim again)`);
    void this.reconnect();
  }

  /** Connects to the restarted supervisor, asks again what was in flight, and claims every release again. */
  private async reconnect(): Promise<void> {
    const lostAt = this.lostAt ?? Date.now();
    let socket: Socket;
    try {
      socket = await open(this.socketPath, lostAt + this.timeoutMs);
    } catch (error) {
      return this.giveUp(
        `no runtime supervisor answered within ${Math.round(this.timeoutMs / 1000)} s after the connection closed (${(error as Error).message})`,
      );
    }
    if (this.closing) return void socket.destroy();
    this.attach(socket);
    const inFlight = new Set<string>();
    for (const [id, waiting] of this.pending) {
      if (waiting.request.op === 'start') inFlight.add(waiting.request.release.releaseId);
      send(socket, { ...waiting.request, id } as SupervisorRequest);
    }
    const claims = [...this.claims].filter(([releaseId]) => !inFlight.has(releaseId));
    try {
      await Promise.all(claims.map(([releaseId, claim]) => this.claimAgain(releaseId, claim)));
    } catch (error) {
      if (socket === this.socket && !socket.destroyed) this.giveUp((error as Error).message);
      return;
    }
    if (socket !== this.socket || this.lostAt !== lostAt) return;
    this.lostAt = undefined;
    this.logger.log(
      `reconnected to the runtime supervisor ${Date.now() - lostAt} ms after the connection closed; ${claims.length} running release(s) claimed again`,
    );
  }

  private async claimAgain(releaseId: string, claim: Claim): Promise<void> {
    let info: RunningInfo;
    try {
      info = (await this.call({ op: 'start', release: claim.spec })).result as RunningInfo;
    } catch (error) {
      throw new Error(`release ${releaseId} could not be claimed again from the restarted runtime supervisor: ${(error as Error).message}`, { cause: error });
    }
    if (claim.port !== undefined && info.port !== claim.port) throw new Error(`release ${releaseId} came back on port ${info.port} instead of ${claim.port}`);
    const host = info.host ?? '127.0.0.1';
    if (claim.host !== undefined && host !== claim.host)
      throw new Error(`release ${releaseId} came back at ${host} instead of ${claim.host} (the sandbox network path changed)`);
  }

  private giveUp(reason: string): void {
    for (const [id, waiting] of this.pending) waiting.resolve({ id, ok: false, error: { kind: 'other', message: 'the runtime supervisor went away' } });
    this.pending.clear();
    if (!this.closing) this.onLost(reason);
  }

  logFile(releaseId: string): string {
    return join(this.dir, 'logs', `${releaseId}.log`);
  }

  /** The release's log across its ring (the supervisor writes it; the edge only reads), oldest first. */
  readLog(releaseId: string, lastBytes?: number): Promise<string | undefined> {
    return readLogRing(this.logFile(releaseId), this.logFiles, lastBytes);
  }

  private async call(request: Request): Promise<SupervisorAnswer & { ok: true }> {
    const id = this.nextId++;
    const answer = await new Promise<SupervisorAnswer>((resolve) => {
      this.pending.set(id, { request, resolve });
      // While reconnecting, a resendable request waits for the new connection.
      if (this.socket && !this.socket.destroyed) send(this.socket, { ...request, id } as SupervisorRequest);
      else if (!resendable(request)) {
        this.pending.delete(id);
        resolve({ id, ok: false, error: { kind: 'other', message: 'the runtime supervisor went away' } });
      }
    });
    if (!answer.ok) throw toError(answer.error);
    return answer;
  }

  async start(release: ReleaseToRun): Promise<RunningRelease> {
    const claim = { spec: release } as Claim;
    this.claims.set(release.releaseId, claim);
    let info: RunningInfo;
    try {
      info = (await this.call({ op: 'start', release })).result as RunningInfo;
    } catch (error) {
      if (this.claims.get(release.releaseId) === claim) this.claims.delete(release.releaseId);
      throw error;
    }
    claim.port = info.port;
    claim.host = info.host ?? '127.0.0.1';
    return {
      releaseId: info.releaseId,
      host: info.host ?? '127.0.0.1',
      port: info.port,
      ...(info.portFound ? { portFound: info.portFound } : {}),
      logTail: () => readLogRingEndSync(this.logFile(info.releaseId), this.logFiles, LOG_TAIL_BYTES),
      report: async () => ((await this.call({ op: 'report', releaseId: info.releaseId })).result as RuntimeReport | null) ?? undefined,
      stop: async (graceMs?: number) => {
        if (this.claims.get(info.releaseId) === claim) this.claims.delete(info.releaseId);
        await this.call({ op: 'stop', releaseId: info.releaseId, ...(graceMs === undefined ? {} : { graceMs }) }).catch(() => undefined);
      },
    };
  }

  /** What the supervisor runs now (for tests and diagnostics). */
  async list(): Promise<RunningInfo[]> {
    return (await this.call({ op: 'list' })).result as RunningInfo[];
  }

  close(): void {
    this.closing = true;
    this.socket?.removeAllListeners('close');
    this.socket?.end();
  }
}
