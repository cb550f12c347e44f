import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, readFile, rename, stat, type FileHandle } from 'node:fs/promises';

export interface LogRingOptions {
  /** Largest size of one file, bytes: the current file is rotated before a write would pass it. */
  maxBytes: number;
  /** How many files, the current one included: the ring never holds more than `files × maxBytes`. */
  files: number;
}

/** Pending bytes past which `write` answers false: the caller stops reading until `drained()`. */
const HIGH_WATER = 1024 * 1024;

/** `<file>` (newest), `<file>.1`, … `<file>.<files-1>` (oldest). */
export function ringFiles(file: string, files: number): string[] {
  return Array.from({ length: files }, (_, i) => (i === 0 ? file : `${file}.${i}`));
}

/**
 * A release's log as a ring of files (logrotate's numbering): `<file>` is written until the next
 * chunk would make it larger than `maxBytes`, then `<file>.1` becomes `<file>.2` and so on, the
 * oldest is overwritten, and `<file>` starts empty. Writes are asynchronous and coalesced (one
 * write per turn of whatever queued meanwhile), never synchronous on the caller's event loop;
 * `write` answering false means more than a MiB waits for the disk, and the caller should stop
 * reading its source (back-pressure all the way to the app's pipe). A failed write (disk full)
 * does not throw into the caller: what follows is discarded and `failure` says why.
 */
export class LogRing {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushing?: Promise<void>;
  private waiters: (() => void)[] = [];
  private closed = false;
  failure?: Error;

  private constructor(
    readonly file: string,
    private readonly options: LogRingOptions,
    private handle: FileHandle,
    private size: number,
  ) {}

  static async open(file: string, options: LogRingOptions): Promise<LogRing> {
    if (options.maxBytes < 1 || options.files < 1)
      throw new Error(`a log ring needs at least one file of at least one byte (got ${options.files} × ${options.maxBytes})`);
    const handle = await open(file, 'a', 0o600);
    return new LogRing(file, options, handle, (await handle.stat()).size);
  }

  /** Queues `data`; false: the caller should wait for `drained()` before writing more. */
  write(data: Buffer | string): boolean {
    if (this.closed || this.failure) return true;
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (chunk.length === 0) return true;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.flushing ??= this.flush();
    return this.pendingBytes <= HIGH_WATER;
  }

  /** Resolves once at most HIGH_WATER bytes wait. */
  drained(): Promise<void> {
    if (this.pendingBytes <= HIGH_WATER) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0 && !this.failure) {
        const batch = Buffer.concat(this.pending);
        this.pending = [];
        await this.append(batch);
        this.pendingBytes -= batch.length;
        if (this.pendingBytes <= HIGH_WATER) for (const wake of this.waiters.splice(0)) wake();
      }
    } catch (error) {
      this.failure = error as Error;
      this.pending = [];
      this.pendingBytes = 0;
      for (const wake of this.waiters.splice(0)) wake();
    } finally {
      this.flushing = undefined;
    }
  }

  /** Writes `batch` across as many rotations as it needs, never letting a file pass maxBytes. */
  private async append(batch: Buffer): Promise<void> {
    let offset = 0;
    while (offset < batch.length) {
      if (this.size >= this.options.maxBytes) await this.rotate();
      const room = this.options.maxBytes - this.size;
      let end = Math.min(batch.length, offset + room);
      // Cut at a line's end when one fits, so a rotated file ends with a whole line.
      if (end < batch.length) {
        const newline = batch.lastIndexOf(0x0a, end - 1);
        if (newline >= offset) end = newline + 1;
        else if (this.size > 0) {
          await this.rotate();
          continue;
        }
      }
      const { bytesWritten } = await this.handle.write(batch, offset, end - offset);
      offset += bytesWritten;
      this.size += bytesWritten;
    }
  }

  private async rotate(): Promise<void> {
    await this.handle.close();
    const names = ringFiles(this.file, this.options.files);
    for (let i = names.length - 1; i > 0; i -= 1) await rename(names[i - 1]!, names[i]!).catch(ignoreMissing);
    // With a single file, rotating is starting it afresh.
    this.handle = await open(this.file, names.length > 1 ? 'a' : 'w', 0o600);
    this.size = 0;
  }

  /** Writes what is queued, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.handle.close().catch(() => undefined);
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

/**
 * A release's whole log across its ring, oldest first; with `lastBytes`, only its end (read from
 * the newest files backwards: the files may be 8 MiB each, the tail is a few KiB). Files missing
 * (never rotated, or rotated while reading) are skipped; no file at all → undefined.
 */
export async function readLogRing(file: string, files: number, lastBytes = Infinity): Promise<string | undefined> {
  const parts: Buffer[] = [];
  let total = 0;
  let found = false;
  for (const name of ringFiles(file, files)) {
    if (total >= lastBytes) break;
    const size = await stat(name).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) continue;
    found = true;
    const want = Math.min(size, lastBytes - total);
    const part = want === size ? await readFile(name).catch(() => Buffer.alloc(0)) : await readEnd(name, want);
    parts.unshift(part);
    total += part.length;
  }
  return found ? Buffer.concat(parts).toString('utf8') : undefined;
}

async function readEnd(name: string, bytes: number): Promise<Buffer> {
  const handle = await open(name, 'r').catch(() => undefined);
  if (!handle) return Buffer.alloc(0);
  try {
    const size = (await handle.stat()).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer;
  } finally {
    await handle.close();
  }
}

/**
 * The last `lastBytes` (a few KiB) of a release's log across its ring, synchronously (for
 * `RunningRelease.logTail`); '' when there is none.
 */
export function readLogRingEndSync(file: string, files: number, lastBytes: number): string {
  const parts: Buffer[] = [];
  let total = 0;
  for (const name of ringFiles(file, files)) {
    if (total >= lastBytes) break;
    let fd: number | undefined;
    try {
      fd = openSync(name, 'r');
      const size = fstatSync(fd).size;
      const length = Math.min(size, lastBytes - total);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      parts.unshift(buffer);
      total += length;
    } catch {
      /* not rotated yet, or rotated away meanwhile */
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return Buffer.concat(parts).toString('utf8');
}
