/**
 * What a running release did that its owner should hear about although its deploy succeeded:
 * crashes (its process exited while it was serving), the restarts that followed, and the error
 * lines it wrote to stderr. The runtime counts them from the release's start; the edge reads the
 * counts once the release's first minute live is over and turns them into the deployment's
 * hazards (`runtime_crashed`, `runtime_errors`), redacted with the application's secret values.
 * Everything here is bounded: counts, a few excerpts of a few hundred characters, one carry.
 */

/** The runtime's account of one release, as `RunningRelease.report()` gives it (raw text: not redacted). */
export interface RuntimeReport {
  /** Times the release's process exited on its own after it had answered HTTP. */
  crashes: number;
  /** Times it was started again after such an exit. */
  restarts: number;
  /** How the last crash ended (`1`, `SIGKILL`…). */
  lastExit: string | null;
  /** The last lines the release wrote before its first crash. */
  crashExcerpt: string;
  /** Error lines written to stderr (see `isErrorLine`). */
  errorLines: number;
  /** The first few of them. */
  errorExcerpt: string[];
  /** CPU time of the release's processes since it started (its cgroup), when the runtime knows it. */
  cpuSeconds?: number | null;
  /** Memory its processes hold now (its cgroup), when the runtime knows it. */
  memoryBytes?: number | null;
}

/** Lines kept in an excerpt, and characters of each. */
const EXCERPT_LINES = 5;
const EXCERPT_LINE_CHARS = 300;
/** A stderr line longer than this is taken as cut here (the rest waits for its newline unread). */
const MAX_CARRY = 4096;
/** How long after an exit its last output is taken as arrived. */
const CRASH_OUTPUT_SETTLE_MS = 200;

/**
 * What npm, which starts most releases (`npm run start`), writes of its own: its update notice,
 * and its account of a script that exited non-zero, which a crash already reports.
 */
const NPM_LINE = /^npm (notice|warn|WARN|error|ERR!)( |$)/;

/**
 * A stderr line that says something went wrong: not blank, not a stack frame continuing the
 * line before (`    at f (file.js:1:2)`: the error is counted once, by its first line), not one
 * of Node's own process warnings (`(node:12) [DEP0005] DeprecationWarning: …` and the
 * `(Use \`node --trace-warnings …\`)` line after it), which are advice rather than failures, not
 * npm's own (NPM_LINE).
 */
export function isErrorLine(line: string): boolean {
  if (line.trim() === '') return false;
  if (/^\s+at\s/.test(line) || /^\s*\.\.\. \d+ more/.test(line)) return false;
  if (/^\(node:\d+\) (\[\w+\] )?\w*Warning\b/.test(line)) return false;
  if (/^\(Use `node --trace-/.test(line)) return false;
  if (NPM_LINE.test(line)) return false;
  return true;
}

/** `text`'s last `lines` lines, each at most EXCERPT_LINE_CHARS long. */
function lastLines(text: string, lines: number): string {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('[slipway]') && !NPM_LINE.test(l) && !/^> /.test(l))
    .slice(-lines)
    .map((l) => l.slice(0, EXCERPT_LINE_CHARS))
    .join('\n');
}

export class ReleaseWatch {
  private crashes = 0;
  private restarts = 0;
  private lastExit: string | null = null;
  private crashExcerpt = '';
  private errorLines = 0;
  private readonly errorExcerpt: string[] = [];
  private carry = '';

  /** A chunk the release wrote to stderr (whole lines counted; a partial one waits for its end). */
  stderr(chunk: Buffer | string): void {
    const text = this.carry + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      this.carry = text.length > MAX_CARRY ? '' : text;
      if (text.length > MAX_CARRY) this.line(text);
      return;
    }
    this.carry = text.slice(end + 1);
    if (this.carry.length > MAX_CARRY) this.carry = '';
    for (const line of text.slice(0, end).split('\n')) this.line(line);
  }

  private line(line: string): void {
    if (!isErrorLine(line)) return;
    this.errorLines += 1;
    if (this.errorExcerpt.length < EXCERPT_LINES) this.errorExcerpt.push(line.slice(0, EXCERPT_LINE_CHARS));
  }

  /**
   * The process exited on its own while serving. `logTail` is read a moment later: what the
   * process wrote just before it died (its stack trace) can still be in the pipe when its exit is seen.
   */
  crashed(exit: string, logTail: () => string): void {
    this.crashes += 1;
    this.lastExit = exit;
    if (this.crashes > 1) return;
    setTimeout(() => {
      this.crashExcerpt = lastLines(logTail(), EXCERPT_LINES);
    }, CRASH_OUTPUT_SETTLE_MS).unref();
  }

  restarted(): void {
    this.restarts += 1;
  }

  report(): RuntimeReport {
    return {
      crashes: this.crashes,
      restarts: this.restarts,
      lastExit: this.lastExit,
      crashExcerpt: this.crashExcerpt,
      errorLines: this.errorLines,
      errorExcerpt: [...this.errorExcerpt],
    };
  }
}
