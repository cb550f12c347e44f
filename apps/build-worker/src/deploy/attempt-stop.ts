/** Why an attempt was told to stop. */
export type StopReason = 'shutdown' | 'deadline' | 'lost';

/** Thrown between steps once the attempt was told to stop; the pipeline maps it by `reason`. */
export class AttemptStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(`the attempt was stopped (${reason})`);
  }
}

export interface AttemptStopOptions {
  /** The worker is shutting down (SIGTERM past its grace period). */
  shutdown: AbortSignal;
  /** From the build's start: past it the attempt stops (`DEPLOY_TIMEOUT_MS`). */
  deadlineMs: number;
  /** How often the row is looked at, and whether this attempt still owns it. */
  watchEveryMs: number;
  stillRunning: () => Promise<boolean>;
}

/**
 * One signal for everything that must end a running attempt at once: the worker's shutdown, the
 * deadline counted from the build's start, and the row no longer being this attempt's (the
 * reconciler failed it, another attempt took it). Aborting kills the running command's process
 * group (the sandbox listens to it), so a deadline or a failed row never leaves a build running.
 */
export class AttemptStop {
  private readonly controller = new AbortController();
  private stopReason: StopReason | null = null;
  private readonly deadline: NodeJS.Timeout;
  private readonly watch: NodeJS.Timeout;
  private readonly onShutdown = () => this.stop('shutdown');
  private readonly shutdownSignal: AbortSignal;

  constructor(options: AttemptStopOptions) {
    this.shutdownSignal = options.shutdown;
    options.shutdown.addEventListener('abort', this.onShutdown, { once: true });
    if (options.shutdown.aborted) this.stop('shutdown');
    this.deadline = setTimeout(() => this.stop('deadline'), options.deadlineMs);
    let checking = false;
    this.watch = setInterval(() => {
      if (checking) return;
      checking = true;
      // A database that does not answer is not a lost row: the next look decides.
      options
        .stillRunning()
        .then(
          (mine) => !mine && this.stop('lost'),
          () => undefined,
        )
        .finally(() => (checking = false));
    }, options.watchEveryMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get reason(): StopReason | null {
    return this.stopReason;
  }

  throwIfStopped(): void {
    if (this.stopReason) throw new AttemptStopped(this.stopReason);
  }

  private stop(reason: StopReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.controller.abort(new AttemptStopped(reason));
  }

  dispose(): void {
    clearTimeout(this.deadline);
    clearInterval(this.watch);
    this.shutdownSignal.removeEventListener('abort', this.onShutdown);
  }
}
