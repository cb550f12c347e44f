import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_LOG_LIMITS, SandboxUnavailableError, UnhealthyReleaseError, readLogRing, readLogRingEndSync, type ReleaseToRun, type RunningRelease, type RuntimeDriver, type RuntimeReport } from '@slipway/runtime';
import { readLines, send, type RunningInfo, type SupervisorAnswer, type SupervisorError, type SupervisorRequest } from './protocol.js';

const LOG_TAIL_BYTES = 16_000;

function toError(error: SupervisorError): Error {
  if (error.kind === 'unhealthy') return new UnhealthyReleaseError(error.message, error.logTail);
  if (error.kind === 'sandbox') return new SandboxUnavailableError(error.message);
  return new Error(error.message);
}

type Pending = { resolve: (answer: SupervisorAnswer) => void };
type Request = SupervisorRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The `local` runtime driver when the launcher runs a runtime supervisor
 * (`RUNTIME_SUPERVISOR_SOCKET`): releases run as the supervisor's children, not this edge's, so
 * they outlive an edge crash; `start` of a release the supervisor already runs hands it back at
 * once (how a restarted edge re-adopts its apps). The connection lost means the supervisor — and
 * with it every app — is gone: `onLost` is called (the edge exits, its restart starts them anew).
 */
export class RemoteRuntimeDriver implements RuntimeDriver {
  readonly name = 'local' as const;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private constructor(private readonly socket: Socket, private readonly dir: string, private readonly logFiles: number) {
    readLines(socket, (message) => {
      const answer = message as SupervisorAnswer;
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      waiting?.resolve(answer);
    });
  }

  /** Connects, retrying while the supervisor starts (up to `timeoutMs`). */
  static async connect(socketPath: string, dir: string, timeoutMs: number, onLost: (reason: string) => void, logFiles = DEFAULT_LOG_LIMITS.files): Promise<RemoteRuntimeDriver> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const socket = await new Promise<Socket>((resolve, reject) => {
          const s = connect(socketPath);
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
        const driver = new RemoteRuntimeDriver(socket, dir, logFiles);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          for (const waiting of driver.pending.values()) waiting.resolve({ id: 0, ok: false, error: { kind: 'other', message: 'the runtime supervisor went away' } });
          driver.pending.clear();
          onLost('the connection to the runtime supervisor closed');
        });
        await driver.call({ op: 'ping' });
        return driver;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`the runtime supervisor at ${socketPath} does not answer: ${(error as Error).message}`, { cause: error });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
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
      this.pending.set(id, { resolve });
      send(this.socket, { ...request, id } as SupervisorRequest);
    });
    if (!answer.ok) throw toError(answer.error);
    return answer;
  }

  async start(release: ReleaseToRun): Promise<RunningRelease> {
    const info = (await this.call({ op: 'start', release })).result as RunningInfo;
    return {
      releaseId: info.releaseId,
      host: '127.0.0.1',
      port: info.port,
      logTail: () => readLogRingEndSync(this.logFile(info.releaseId), this.logFiles, LOG_TAIL_BYTES),
      report: async () => ((await this.call({ op: 'report', releaseId: info.releaseId })).result as RuntimeReport | null) ?? undefined,
      stop: async (graceMs?: number) => {
        await this.call({ op: 'stop', releaseId: info.releaseId, ...(graceMs === undefined ? {} : { graceMs }) }).catch(() => undefined);
      },
    };
  }

  /** What the supervisor runs now (for tests and diagnostics). */
  async list(): Promise<RunningInfo[]> {
    return (await this.call({ op: 'list' })).result as RunningInfo[];
  }

  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.end();
  }
}
