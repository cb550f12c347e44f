import { chmod, mkdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Logger } from '@nestjs/common';
import { SandboxUnavailableError, UnhealthyReleaseError, type ReleaseToRun, type RunningRelease, type RuntimeDriver, type RuntimeReport } from '@slipway/runtime';
import { readLines, send, type RunningInfo, type SupervisorError, type SupervisorRequest } from './protocol.js';

interface Held {
  applicationId: string;
  release: Promise<RunningRelease>;
  /** Since when no connected edge has claimed it (undefined: claimed by the connected edge). */
  unclaimedSince?: number;
}

export interface RuntimeSupervisorOptions {
  socketPath: string;
  /** A release no edge claims again this long after its edge went away is stopped. */
  adoptGraceMs: number;
}

/**
 * The runtime supervisor: the process that owns the apps' processes (their sandboxes are its
 * children, tied to its life by `setpriv --pdeathsig SIGKILL`), so that the edge — which proxies
 * to them — can crash and come back without taking them down. The edge asks it to start and stop
 * releases over a Unix socket; a restarted edge asks for the releases it routes to again and gets
 * the running ones back (adoption). Releases no edge claims within `adoptGraceMs` after the edge
 * went away (drained old releases, apps deleted meanwhile) are stopped: nothing runs unsupervised
 * or unclaimed for long. Crash restarts of an app stay here (LocalDriver), edge or no edge.
 */
export class RuntimeSupervisor {
  private readonly logger = new Logger('runtime');
  private readonly held = new Map<string, Held>();
  private readonly connections = new Set<Socket>();
  private server?: Server;
  private sweep?: NodeJS.Timeout;

  constructor(private readonly driver: RuntimeDriver, private readonly options: RuntimeSupervisorOptions) {}

  async listen(): Promise<void> {
    // Only the platform's user may connect: the socket carries each release's secrets.
    await mkdir(dirname(this.options.socketPath), { recursive: true, mode: 0o700 });
    await chmod(dirname(this.options.socketPath), 0o700);
    await rm(this.options.socketPath, { force: true });
    this.server = createServer((socket) => this.accept(socket));
    await new Promise<void>((ok, fail) => {
      this.server!.once('error', fail);
      this.server!.listen(this.options.socketPath, ok);
    });
    await chmod(this.options.socketPath, 0o600);
    this.sweep = setInterval(() => void this.stopUnclaimed(), Math.min(5000, this.options.adoptGraceMs));
    this.sweep.unref();
    this.logger.log(`runtime supervisor listening on ${this.options.socketPath}`);
  }

  private accept(socket: Socket): void {
    this.connections.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.connections.delete(socket);
      if (this.connections.size > 0) return;
      const now = Date.now();
      for (const held of this.held.values()) held.unclaimedSince ??= now;
      if (this.held.size) this.logger.warn(`the edge went away; ${this.held.size} release(s) keep running, waiting ${Math.round(this.options.adoptGraceMs / 1000)} s for it to claim them`);
    });
    readLines(socket, (message) => void this.handle(socket, message as SupervisorRequest));
  }

  private async handle(socket: Socket, request: SupervisorRequest): Promise<void> {
    try {
      switch (request.op) {
        case 'ping':
          return send(socket, { id: request.id, ok: true, result: { pid: process.pid } });
        case 'list':
          return send(socket, { id: request.id, ok: true, result: await this.list() });
        case 'start':
          return send(socket, { id: request.id, ok: true, result: await this.start(request.release) });
        case 'report':
          return send(socket, { id: request.id, ok: true, result: (await this.report(request.releaseId)) ?? null });
        case 'stop':
          await this.stop(request.releaseId, request.graceMs);
          return send(socket, { id: request.id, ok: true });
        default:
          return send(socket, { id: (request as { id: number }).id, ok: false, error: { kind: 'other', message: 'unknown operation' } });
      }
    } catch (error) {
      send(socket, { id: request.id, ok: false, error: describeError(error) });
    }
  }

  /** Starts the release, or hands back the one already running (the edge adopting it after a restart). */
  private async start(spec: ReleaseToRun): Promise<RunningInfo> {
    let held = this.held.get(spec.releaseId);
    if (held) {
      if (held.unclaimedSince !== undefined) this.logger.log(`release ${spec.releaseId} adopted by the edge again (kept running)`);
      held.unclaimedSince = undefined;
    } else {
      held = { applicationId: spec.applicationId, release: this.driver.start(spec) };
      this.held.set(spec.releaseId, held);
      const started = held;
      held.release.catch(() => {
        if (this.held.get(spec.releaseId) === started) this.held.delete(spec.releaseId);
      });
    }
    const running = await held.release;
    return { releaseId: running.releaseId, applicationId: held.applicationId, port: running.port };
  }

  private async report(releaseId: string): Promise<RuntimeReport | undefined> {
    const running = await this.held.get(releaseId)?.release.catch(() => undefined);
    return running?.report?.();
  }

  private async stop(releaseId: string, graceMs?: number): Promise<void> {
    const held = this.held.get(releaseId);
    if (!held) return;
    this.held.delete(releaseId);
    await held.release.then((r) => r.stop(graceMs), () => undefined);
  }

  private async list(): Promise<RunningInfo[]> {
    const settled = await Promise.all([...this.held.values()].map((h) => h.release.then((r) => ({ releaseId: r.releaseId, applicationId: h.applicationId, port: r.port }), () => undefined)));
    return settled.filter((r): r is RunningInfo => r !== undefined);
  }

  private async stopUnclaimed(): Promise<void> {
    const now = Date.now();
    for (const [releaseId, held] of [...this.held]) {
      if (held.unclaimedSince === undefined || now - held.unclaimedSince < this.options.adoptGraceMs) continue;
      this.logger.log(`release ${releaseId} was not claimed by any edge within ${Math.round(this.options.adoptGraceMs / 1000)} s: stopping it`);
      await this.stop(releaseId);
    }
  }

  /** Stops every release (SIGTERM, then SIGKILL after the grace) and closes the socket. */
  async close(): Promise<void> {
    clearInterval(this.sweep);
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
    await Promise.all([...this.held.keys()].map((id) => this.stop(id)));
    await rm(this.options.socketPath, { force: true });
  }
}

function describeError(error: unknown): SupervisorError {
  if (error instanceof UnhealthyReleaseError) return { kind: 'unhealthy', message: error.message, logTail: error.logTail };
  if (error instanceof SandboxUnavailableError) return { kind: 'sandbox', message: error.message };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}
