import { chmod, mkdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Logger } from '@nestjs/common';
import { readLines, send, type RunningInfo, type SupervisorError, type SupervisorRequest } from '@slipway/data-plane';
import {
  UnhealthyReleaseError,
  type AdoptedRelease,
  type Adoption,
  type ReleaseToRun,
  type RunningRelease,
  type RuntimeDriver,
  type RuntimeReport,
} from '@slipway/runtime';
import { SandboxUnavailableError } from '@slipway/sandbox';

interface Held {
  applicationId: string;
  release: Promise<RunningRelease>;
  /** Since when no connected edge has claimed it (undefined: claimed by the connected edge). */
  unclaimedSince?: number;
  /** Taken over from the previous supervisor: the edge's first `start` hands it its ReleaseToRun. */
  adopted?: AdoptedRelease;
  /** That first claim, shared by concurrent ones. */
  claimed?: Promise<void>;
}

/** A driver whose apps outlive it, and whose successor takes them over (LocalDriver with `records`). */
interface AdoptingDriver extends RuntimeDriver {
  adopt(): Promise<Adoption>;
}

function adopting(driver: RuntimeDriver): driver is AdoptingDriver {
  return typeof (driver as Partial<AdoptingDriver>).adopt === 'function';
}

export interface RuntimeSupervisorOptions {
  socketPath: string;
  /** A release no edge claims again this long after its edge went away is stopped. */
  adoptGraceMs: number;
}

/**
 * The runtime supervisor: the process that owns the apps' processes, so that the edge — which
 * proxies to them — can crash and come back without taking them down. The edge asks it to start
 * and stop releases over a Unix socket; a restarted edge asks for the releases it routes to again
 * and gets the running ones back (adoption). Crash restarts of an app stay here (LocalDriver),
 * edge or no edge.
 *
 * The apps outlive the supervisor itself too: each runs in its own session and cgroup, not tied
 * to it, with its output through FIFOs, and the driver records what runs. A restarted supervisor
 * takes over every recorded release still running (`adopt`, before it listens), and the edge —
 * which reconnects by itself — claims them again, handing each its ReleaseToRun once more.
 * Releases no edge claims within `adoptGraceMs` (after the edge went away, or after this
 * supervisor started with releases of a previous one) are stopped: nothing runs unsupervised or
 * unclaimed for long.
 */
export class RuntimeSupervisor {
  private readonly logger = new Logger('runtime');
  private readonly held = new Map<string, Held>();
  private readonly connections = new Set<Socket>();
  private server?: Server;
  private sweep?: NodeJS.Timeout;

  constructor(
    private readonly driver: RuntimeDriver,
    private readonly options: RuntimeSupervisorOptions,
  ) {}

  async listen(): Promise<void> {
    await this.adoptPrevious();
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

  /** The previous supervisor's releases that still run, held as unclaimed (the edge claims them within the grace). */
  private async adoptPrevious(): Promise<void> {
    if (!adopting(this.driver)) return;
    const { adopted, cleaned, failed } = await this.driver.adopt();
    const now = Date.now();
    for (const release of adopted) {
      const held: Held = { applicationId: release.applicationId, release: Promise.resolve(release), unclaimedSince: now, adopted: release };
      this.held.set(release.releaseId, held);
      // Died before the edge claimed it (it has cleaned itself up): a claim now starts it afresh.
      void release.gone.then(() => {
        if (this.held.get(release.releaseId) !== held) return;
        this.held.delete(release.releaseId);
        this.logger.warn(`release ${release.releaseId} (taken over from the previous runtime supervisor) exited before the edge claimed it`);
      });
    }
    if (adopted.length)
      this.logger.log(
        `took over ${adopted.length} running release(s) from the previous runtime supervisor (pids ${adopted.map((r) => r.pid).join(', ')}); waiting ${Math.round(this.options.adoptGraceMs / 1000)} s for the edge to claim them`,
      );
    if (cleaned.length) this.logger.log(`${cleaned.length} recorded release(s) no longer running: cleaned up (${cleaned.join(', ')})`);
    for (const { releaseId, reason } of failed)
      this.logger.error(
        `release ${releaseId} could not be taken over from the previous runtime supervisor (${reason}): killed instead; the edge's claim starts it afresh`,
      );
  }

  private accept(socket: Socket): void {
    this.connections.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.connections.delete(socket);
      if (this.connections.size > 0) return;
      const now = Date.now();
      for (const held of this.held.values()) held.unclaimedSince ??= now;
      if (this.held.size)
        this.logger.warn(
          `the edge went away; ${this.held.size} release(s) keep running, waiting ${Math.round(this.options.adoptGraceMs / 1000)} s for it to claim them`,
        );
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
    if (held?.adopted && (await this.claim(held, spec)) === 'gone') held = undefined;
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
    return info(running, held.applicationId);
  }

  /**
   * The edge's first claim of a release taken over from the previous supervisor: it gets its
   * ReleaseToRun (crash restarts work again) and must answer HTTP; one that does not is stopped,
   * and the claim starts the release afresh ('gone').
   */
  private async claim(held: Held, spec: ReleaseToRun): Promise<'kept' | 'gone'> {
    const adopted = held.adopted!;
    held.claimed ??= adopted.claim(spec);
    try {
      await held.claimed;
      return 'kept';
    } catch (error) {
      if (this.held.get(spec.releaseId) === held) {
        this.logger.warn(
          `release ${spec.releaseId} (taken over from the previous runtime supervisor) did not answer when the edge claimed it (${(error as Error).message}): starting it afresh`,
        );
        await this.stop(spec.releaseId, 1000);
      }
      return 'gone';
    }
  }

  private async report(releaseId: string): Promise<RuntimeReport | undefined> {
    const running = await this.held.get(releaseId)?.release.catch(() => undefined);
    return running?.report?.();
  }

  private async stop(releaseId: string, graceMs?: number): Promise<void> {
    const held = this.held.get(releaseId);
    if (!held) return;
    this.held.delete(releaseId);
    await held.release.then(
      (r) => r.stop(graceMs),
      () => undefined,
    );
  }

  private async list(): Promise<RunningInfo[]> {
    const settled = await Promise.all(
      [...this.held.values()].map((h) =>
        h.release.then(
          (r) => info(r, h.applicationId),
          () => undefined,
        ),
      ),
    );
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

function info(running: RunningRelease, applicationId: string): RunningInfo {
  const pid = (running as Partial<AdoptedRelease>).pid;
  return {
    releaseId: running.releaseId,
    applicationId,
    host: running.host,
    port: running.port,
    ...(pid ? { pid } : {}),
    ...(running.portFound ? { portFound: running.portFound } : {}),
  };
}

function describeError(error: unknown): SupervisorError {
  if (error instanceof UnhealthyReleaseError) return { kind: 'unhealthy', message: error.message, logTail: error.logTail };
  if (error instanceof SandboxUnavailableError) return { kind: 'sandbox', message: error.message };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}
