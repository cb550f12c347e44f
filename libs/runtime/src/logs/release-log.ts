import type { Readable } from 'node:stream';
import type { LogBudget, Throttled } from './log-budget.js';
import type { LogRing } from './log-ring.js';
import { stampLines, type LogStream } from './log-lines.js';

/** A line longer than this is cut (and each piece taken as a line): a newline-less flood stays bounded. */
const MAX_LINE_BYTES = 16 * 1024;
/** The in-memory end of the log (what an unhealthy start reports). */
const TAIL_CHARS = 16_000;
/** Dropped lines are summed up in one marker line at most this often. */
const MARKER_EVERY_MS = 1000;

interface Source {
  stream: Readable;
  /** Which of the app's pipes: each kept line is stamped with it. */
  name: LogStream;
  /** The start of a line not yet ended. */
  carry: Buffer;
}

interface Drops {
  lines: number;
  bytes: number;
  since: number;
}

/**
 * One release's log: what its processes write to stdout and stderr, cut into whole lines (so the
 * two pipes never interleave mid-line), within its application's `LogBudget`, into its `LogRing`.
 * Lines over the budget are dropped and a marker line says how many (Heroku's L10):
 * `[slipway] log rate limit: dropped N lines (M bytes) in the last S s`. Past the budget's read
 * rate, or while the disk is behind, the pipes are paused: the app's writes wait, not this process.
 * The platform's own lines (`note`) are never dropped. Each line is kept stamped with its time
 * and stream (`<ISO time> <stdout|stderr|slipway> <text>`, log-lines.ts) — one clock reading per
 * block read, not per line; the in-memory tail (an unhealthy start's report) stays as the app wrote it.
 */
export class ReleaseLog implements Throttled {
  private readonly sources = new Set<Source>();
  private readonly holds = new Set<'rate' | 'disk'>();
  private tailText = '';
  private drops?: Drops;
  private markerTimer?: NodeJS.Timeout;
  private closed = false;
  private failureNoted = false;

  constructor(
    private readonly ring: LogRing,
    private readonly budget: LogBudget,
    /** Called once closed (the driver drops a budget no release uses any more). */
    private readonly onClosed: () => void = () => undefined,
  ) {
    budget.join(this);
  }

  /** The last 16 000 characters kept. */
  tail(): string {
    return this.tailText;
  }

  /** Reads `stream` (an app's stdout or stderr, `name`) into the log until it ends. */
  attach(stream: Readable, name: LogStream = 'stdout'): void {
    const source: Source = { stream, name, carry: Buffer.alloc(0) };
    this.sources.add(source);
    stream.on('data', (chunk: Buffer) => this.onChunk(source, chunk));
    stream.on('error', () => undefined);
    stream.once('close', () => {
      if (!this.sources.delete(source)) return;
      if (source.carry.length) this.offer(Buffer.concat([source.carry, NEWLINE]), source.name);
    });
    if (this.holds.size) stream.pause();
  }

  /** A line of the platform's own (start, exit, restart): outside the budget. */
  note(line: string): void {
    this.flushDrops();
    this.emit(Buffer.from(line.endsWith('\n') ? line : `${line}\n`, 'utf8'), 'slipway');
  }

  hold(reason: 'rate' | 'disk'): void {
    if (this.holds.size === 0) for (const s of this.sources) s.stream.pause();
    this.holds.add(reason);
  }

  release(reason: 'rate' | 'disk'): void {
    if (!this.holds.delete(reason) || this.holds.size > 0) return;
    for (const s of this.sources) s.stream.resume();
  }

  private onChunk(source: Source, chunk: Buffer): void {
    this.budget.onRead(chunk.length);
    const data = source.carry.length ? Buffer.concat([source.carry, chunk]) : chunk;
    let end = data.lastIndexOf(0x0a) + 1;
    if (data.length - end > MAX_LINE_BYTES) end = data.length;
    // A copy: the carry must not keep the whole chunk alive.
    source.carry = Buffer.from(data.subarray(end));
    this.offer(data.subarray(0, end), source.name);
  }

  /** Keeps the whole lines of `block` the budget allows, drops (and counts) the rest. */
  private offer(block: Buffer, name: LogStream): void {
    if (block.length === 0 || this.closed) return;
    const can = this.budget.keepable();
    const keep = block.length <= can ? block.length : can > 0 ? block.lastIndexOf(0x0a, can - 1) + 1 : 0;
    if (keep > 0) {
      this.budget.spend(keep);
      this.emit(block.subarray(0, keep), name);
    }
    if (keep < block.length) this.drop(block.subarray(keep));
  }

  private drop(block: Buffer): void {
    let lines = 0;
    for (let at = block.indexOf(0x0a); at >= 0; at = block.indexOf(0x0a, at + 1)) lines += 1;
    if (!this.drops) {
      this.drops = { lines: 0, bytes: 0, since: performance.now() };
      this.markerTimer = setTimeout(() => this.flushDrops(), MARKER_EVERY_MS);
    }
    this.drops.lines += Math.max(lines, 1);
    this.drops.bytes += block.length;
  }

  private flushDrops(): void {
    const drops = this.drops;
    if (!drops) return;
    this.drops = undefined;
    clearTimeout(this.markerTimer);
    const seconds = Math.max(1, Math.round((performance.now() - drops.since) / 1000));
    this.emit(Buffer.from(`[slipway] log rate limit: dropped ${drops.lines} lines (${drops.bytes} bytes) in the last ${seconds} s\n`, 'utf8'), 'slipway');
  }

  private emit(data: Buffer, name: LogStream): void {
    if (this.ring.failure && !this.failureNoted) {
      // The disk refused (full?): what follows is read within the budget and discarded; say so where the owner looks.
      this.failureNoted = true;
      this.tailText += `[slipway] the log file could not be written (${this.ring.failure.message}): output is discarded\n`;
    }
    this.tailText = (this.tailText + data.toString('utf8')).slice(-TAIL_CHARS);
    if (!this.ring.write(stampLines(data, name)) && !this.holds.has('disk')) {
      this.hold('disk');
      void this.ring.drained().then(() => this.release('disk'));
    }
  }

  /** Stops reading (what is still in the pipes is discarded), writes the last marker, closes the ring. */
  async close(): Promise<void> {
    for (const s of this.sources) s.stream.destroy();
    this.sources.clear();
    this.flushDrops();
    this.closed = true;
    this.budget.leave(this);
    this.onClosed();
    await this.ring.close();
  }
}

const NEWLINE = Buffer.from('\n');
