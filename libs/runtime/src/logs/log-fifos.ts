import { execFile } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { lstat, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * An app's stdout or stderr as a named FIFO (in a root-only directory of the runtime supervisor),
 * instead of an anonymous pipe: a pipe breaks when its reader dies — the app's next write gets
 * SIGPIPE/EPIPE and Node apps crash on it — while a FIFO is opened again by whoever reads next.
 *
 * - The app's end is opened read-write (`appEnd`): the app then always holds a reader itself, so
 *   a write never fails for want of one; it only waits when the 64 KiB pipe is full and nobody
 *   reads (the same wait the log budget imposes when it pauses reading).
 * - The supervisor's end (`reader`) is opened non-blocking (an open never waits for a writer),
 *   also read-write: it never sees end-of-file while the app is between two processes (a crash
 *   restart), so one reader serves the release's whole life. The app's exit is learnt from its
 *   process, not from the pipe.
 * - What the app wrote while no supervisor ran stays in the pipe (up to 64 KiB) for the next one.
 */
export class LogFifo {
  constructor(readonly path: string) {}

  /** Makes the FIFO (0600) unless it is there already (a restarted supervisor reuses it). */
  async ensure(): Promise<void> {
    const found = await lstat(this.path).catch(() => undefined);
    if (found?.isFIFO()) return;
    if (found) await rm(this.path, { force: true });
    await run('mkfifo', ['-m', '600', '--', this.path]);
  }

  /** A descriptor for the app's stdout/stderr (pass it to spawn, then `closeAppEnd` it here). */
  appEnd(): number {
    return openSync(this.path, constants.O_RDWR | constants.O_NOCTTY);
  }

  static closeAppEnd(fd: number): void {
    try {
      closeSync(fd);
    } catch {
      /* closed already */
    }
  }

  /** The supervisor's end, as a stream (libuv polls it: no thread waits on a read). */
  reader(): Socket {
    const fd = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY);
    return new Socket({ fd, readable: true, writable: false, allowHalfOpen: true });
  }

  async remove(): Promise<void> {
    await rm(this.path, { force: true });
  }
}
