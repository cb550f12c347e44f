import { open, rename, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

/** How often the log is read, and the size past which it is rotated (renamed, nginx told to reopen). */
const READ_MS = 1000;
const ROTATE_BYTES = 8 * 1024 * 1024;
/** After a reopen signal, the old file is read this long more (workers reopen as they get to it). */
const REOPEN_GRACE_MS = 3000;
const CHUNK = 256 * 1024;
/** An application id without its dashes. */
const ID_HEX = 32;
const MAX_CARRY = 1024;
const [NEWLINE, SPACE, DOT, ZERO, LOWER_A] = [0x0a, 0x20, 0x2e, 0x30, 0x61];

/** The access log nginx writes for metrics (nginx-config.ts `metricsLog`), in its state directory. */
export const metricsLogFile = (stateDir: string) => join(stateDir, 'metrics.log');

/**
 * Reads nginx's metrics log (`<application id without dashes> <status> <request_time>` per line,
 * written by nginx in 64 KiB blocks at most a second apart), as `tail -F` would, and hands each
 * line on. Rotated as logrotate does it: renamed, nginx's master told to reopen (SIGUSR1), the old
 * file read to its end, then the new one. Bounded: one file of ROTATE_BYTES and one being finished.
 */
export class NginxAccessLog {
  private readonly logger = new Logger('edge');
  private handle?: FileHandle;
  private offset = 0;
  /** The end of the last read that is not a whole line yet. */
  private carry: Buffer = Buffer.alloc(0);
  /** The last line's application id, raw (32 hex digits) and as a UUID: most lines repeat it. */
  private readonly lastRaw = Buffer.alloc(ID_HEX);
  private lastId = '';
  private old?: { handle: FileHandle; offset: number; until: number };
  private timer?: NodeJS.Timeout;
  private reading = false;
  /** The first open starts at the file's end: what an earlier edge read is not counted twice. */
  private first = true;

  constructor(
    private readonly file: string,
    /** The nginx master to signal for a reopen. */
    private readonly master: () => Promise<number | undefined>,
    private readonly onLine: (applicationId: string, status: number, ms: number) => void,
    private readonly options: { readMs?: number; rotateBytes?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.readMs ?? READ_MS);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      if (this.old) {
        this.old.offset = await this.drain(this.old.handle, this.old.offset);
        if (Date.now() < this.old.until) return;
        await this.old.handle.close();
        this.old = undefined;
        this.carry = Buffer.alloc(0);
      }
      if (!this.handle) {
        this.handle = await open(this.file, 'r').catch(() => undefined);
        if (!this.handle) return;
        if (this.first) this.offset = (await this.handle.stat()).size;
        this.first = false;
      }
      this.offset = await this.drain(this.handle, this.offset);
      if (this.offset >= (this.options.rotateBytes ?? ROTATE_BYTES)) await this.rotate();
    } catch (error) {
      this.logger.warn(`nginx metrics log: ${(error as Error).message}`);
    } finally {
      this.reading = false;
    }
  }

  /** Reads `handle` from `offset` to its end; answers the new offset. */
  private async drain(handle: FileHandle, offset: number): Promise<number> {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, offset);
      if (bytesRead === 0) return offset;
      offset += bytesRead;
      this.lines(buffer.subarray(0, bytesRead));
    }
  }

  /**
   * Hands on every whole line of `chunk` (after what the last chunk left). Read as bytes, not
   * decoded and split into strings: this runs once per request nginx proxied (a string per line
   * and per field cost the edge ~0.9 µs of CPU per request; bench/README.md "sandbox network").
   */
  private lines(chunk: Buffer): void {
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let start = 0;
    for (let end = data.indexOf(NEWLINE, start); end >= 0; end = data.indexOf(NEWLINE, start)) {
      this.line(data, start, end);
      start = end + 1;
    }
    // A copy: `chunk` is the reader's buffer, overwritten by the next read. A line longer than
    // MAX_CARRY is no line of ours: only its end is kept (and skipped once complete).
    this.carry = Buffer.from(data.subarray(Math.max(start, data.length - MAX_CARRY)));
  }

  /** One line, `<application id without dashes> <status> <seconds>`; anything else is skipped. */
  private line(data: Buffer, start: number, end: number): void {
    if (end - start < ID_HEX + 4 || data[start + ID_HEX] !== SPACE) return;
    const applicationId = this.idAt(data, start);
    if (!applicationId) return;
    let i = start + ID_HEX + 1;
    let status = 0;
    for (; i < end && data[i] !== SPACE; i++) {
      const digit = data[i]! - ZERO;
      if (digit < 0 || digit > 9) return;
      status = status * 10 + digit;
    }
    // $request_time: seconds with a millisecond fraction ("0.004").
    let seconds = 0;
    let scale = 0;
    if (++i >= end) return;
    for (; i < end; i++) {
      const byte = data[i]!;
      if (byte === DOT && scale === 0) scale = 1;
      else if (byte >= ZERO && byte <= ZERO + 9) {
        seconds = seconds * 10 + (byte - ZERO);
        if (scale) scale *= 10;
      } else return;
    }
    this.onLine(applicationId, status, (seconds * 1000) / (scale || 1));
  }

  /** The application id (a UUID) whose 32 hex digits start at `start`; undefined when they are not hex. */
  private idAt(data: Buffer, start: number): string | undefined {
    if (this.lastId && data.compare(this.lastRaw, 0, ID_HEX, start, start + ID_HEX) === 0) return this.lastId;
    for (let i = start; i < start + ID_HEX; i++) {
      const byte = data[i]!;
      if (!((byte >= ZERO && byte <= ZERO + 9) || (byte >= LOWER_A && byte <= LOWER_A + 5))) return undefined;
    }
    const id = data.toString('latin1', start, start + ID_HEX);
    data.copy(this.lastRaw, 0, start, start + ID_HEX);
    this.lastId = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
    return this.lastId;
  }

  private async rotate(): Promise<void> {
    const master = await this.master();
    if (!master || (await stat(this.file).catch(() => undefined)) === undefined) return;
    await rename(this.file, `${this.file}.1`);
    process.kill(master, 'SIGUSR1');
    this.old = { handle: this.handle!, offset: this.offset, until: Date.now() + REOPEN_GRACE_MS };
    this.handle = undefined;
    this.offset = 0;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.handle?.close().catch(() => undefined);
    await this.old?.handle.close().catch(() => undefined);
  }
}
