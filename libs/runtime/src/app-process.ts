import type { ChildProcess } from 'node:child_process';
import { isSameProcess, processStartTime } from '@slipway/sandbox';

/** How often an adopted process is looked at (it is not a child: no exit event comes). */
const WATCH_MS = 200;

/**
 * A release's root process, whether this process started it (a child: its exit is an event) or
 * adopted it from a runtime supervisor that died (watched through /proc by pid and start time:
 * gone, replaced by another process under the same pid, or a zombie all count as exited).
 */
export class AppProcess {
  private ended = false;
  private readonly watch?: NodeJS.Timeout;
  /** Resolves with how it ended (`code 1`, `SIGKILL`, or `gone` for an adopted one). */
  readonly exited: Promise<string>;

  private constructor(
    readonly pid: number,
    readonly startTime: number,
    /** Not a child of this process (a previous supervisor's). */
    readonly adopted: boolean,
    ended: (done: (reason: string) => void) => NodeJS.Timeout | undefined,
  ) {
    let resolve!: (reason: string) => void;
    this.exited = new Promise<string>((r) => (resolve = r));
    this.watch = ended((reason) => {
      if (this.ended) return;
      this.ended = true;
      clearInterval(this.watch);
      resolve(reason);
    });
  }

  static child(child: ChildProcess): AppProcess {
    const pid = child.pid ?? 0;
    return new AppProcess(pid, (pid && processStartTime(pid)) || 0, false, (done) => {
      child.once('exit', (code, signal) => done(`${signal ?? code}`));
      // A process that could not be started at all has no exit to wait for.
      child.once('error', () => (child.pid === undefined ? done('not started') : undefined));
      return undefined;
    });
  }

  static adopted(pid: number, startTime: number): AppProcess {
    return new AppProcess(pid, startTime, true, (done) => {
      if (!isSameProcess(pid, startTime)) {
        done('gone');
        return undefined;
      }
      const timer = setInterval(() => (isSameProcess(pid, startTime) ? undefined : done('gone')), WATCH_MS);
      timer.unref();
      return timer;
    });
  }

  get running(): boolean {
    return !this.ended;
  }
}
