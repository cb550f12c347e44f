import { open, rename, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

/** How often the log is read, and the size past which it is rotated (renamed, nginx told to reopen). */
const READ_MS = 1000;
const ROTATE_BYTES = 8 * 1024 * 1024;
/** After a reopen signal, the old file is read this long more (workers reopen as they get to it). */
const REOPEN_GRACE_MS = 3000;
const CHUNK = 256 * 1024;

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
  private carry = '';
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
        this.carry = '';
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
      this.lines(buffer.toString('latin1', 0, bytesRead));
    }
  }

  private lines(text: string): void {
    const data = this.carry + text;
    const end = data.lastIndexOf('\n');
    this.carry = end < 0 ? data.slice(-1024) : data.slice(end + 1);
    if (end < 0) return;
    for (const line of data.slice(0, end).split('\n')) {
      const [id, status, seconds] = line.split(' ');
      if (!id || id.length !== 32) continue;
      const applicationId = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
      this.onLine(applicationId, Number(status), Number(seconds) * 1000);
    }
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
