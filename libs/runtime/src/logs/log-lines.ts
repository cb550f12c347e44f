import { open, readFile, stat } from 'node:fs/promises';
import { ringFiles } from './log-ring.js';

/** Where a line came from: the app's stdout or stderr, or the platform's own note (start, exit, restart, drops). */
export type LogStream = 'stdout' | 'stderr' | 'slipway';

/** One line of a release's log as the owners' API shows it. */
export interface LogLine {
  /** ISO 8601, milliseconds, UTC: when the runtime read it from the app's pipe. */
  time: string;
  stream: LogStream;
  text: string;
  releaseId: string;
}

const NEWLINE = 0x0a;
const STREAMS = new Set<string>(['stdout', 'stderr', 'slipway']);
/** `2025-01-02T03:04:05.678Z` */
const ISO_LENGTH = 24;

/**
 * Prefixes every line of `block` (whole lines, each ending with a newline) with the time and the
 * stream: `<ISO time> <stream> <text>\n`. One clock reading for the block: the lines of one read
 * arrived together. Bytes are copied, never decoded (an app's invalid UTF-8 stays as it was).
 */
export function stampLines(block: Buffer, stream: LogStream, now = new Date()): Buffer {
  const prefix = Buffer.from(`${now.toISOString()} ${stream} `, 'latin1');
  const parts: Buffer[] = [];
  let start = 0;
  while (start < block.length) {
    const newline = block.indexOf(NEWLINE, start);
    const end = newline < 0 ? block.length : newline + 1;
    parts.push(prefix, block.subarray(start, end));
    start = end;
  }
  if (block.length > 0 && block[block.length - 1] !== NEWLINE) parts.push(Buffer.from('\n'));
  return Buffer.concat(parts);
}

/**
 * One stored line (without its newline) → its time, stream and text. A line written before
 * lines were stamped (or cut by a rotation mid-way) has no stamp: it is taken as stdout with no
 * time, and time searches skip it.
 */
export function parseLogLine(line: string, releaseId: string): Omit<LogLine, 'time'> & { time: string | null } {
  const space = line.indexOf(' ', ISO_LENGTH + 1);
  if (line.length > ISO_LENGTH && line[ISO_LENGTH] === ' ' && line[10] === 'T' && line[ISO_LENGTH - 1] === 'Z' && space > ISO_LENGTH) {
    const stream = line.slice(ISO_LENGTH + 1, space);
    if (STREAMS.has(stream)) return { time: line.slice(0, ISO_LENGTH), stream: stream as LogStream, text: line.slice(space + 1), releaseId };
  }
  return { time: null, stream: 'stdout', text: line, releaseId };
}

export interface LogQuery {
  /** Only lines at or after this instant (ms since the epoch). */
  since?: number;
  /** Only lines before this instant. */
  until?: number;
}

function inWindow(time: string | null, query: LogQuery): boolean {
  if (time === null) return query.since === undefined && query.until === undefined;
  const at = Date.parse(time);
  return (query.since === undefined || at >= query.since) && (query.until === undefined || at < query.until);
}

/** The time of a file's first line (the first 64 bytes read); null when it has none. */
async function firstLineTime(name: string): Promise<number | null> {
  const handle = await open(name, 'r').catch(() => undefined);
  if (!handle) return null;
  try {
    const buffer = Buffer.alloc(64);
    const { bytesRead } = await handle.read(buffer, 0, 64, 0);
    const parsed = parseLogLine(buffer.subarray(0, bytesRead).toString('utf8'), '');
    return parsed.time ? Date.parse(parsed.time) : null;
  } finally {
    await handle.close();
  }
}

/**
 * A release's lines within `query`, oldest first, across its ring (`<file>.N` … `<file>`). A file
 * whose first line is at or before `since` is the last one read: the older ones hold nothing
 * later. `upTo` (bytes of the current file) stops at what a follower will read from next, so that
 * history and a live tail neither repeat nor miss a line. Files missing (rotated meanwhile) are skipped.
 */
export async function readReleaseLines(file: string, files: number, releaseId: string, query: LogQuery = {}, upTo?: number): Promise<LogLine[]> {
  const names: string[] = [];
  for (const name of ringFiles(file, files)) {
    names.unshift(name);
    if (query.since === undefined) continue;
    const first = await firstLineTime(name);
    if (first !== null && first <= query.since) break;
  }
  const lines: LogLine[] = [];
  for (const name of names) {
    let data = await readFile(name).catch(() => undefined);
    if (!data) continue;
    if (name === file && upTo !== undefined) data = data.subarray(0, upTo);
    const text = data.toString('utf8');
    for (const raw of text.split('\n')) {
      if (raw === '') continue;
      const line = parseLogLine(raw, releaseId);
      if (inWindow(line.time, query)) lines.push({ ...line, time: line.time ?? '' });
    }
  }
  return lines;
}

/** The size of the current file of a release's ring (0: none yet). */
export async function currentLogSize(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}
