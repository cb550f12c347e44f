/** Where a command writes, and how: colours and live lines only on a terminal, never in --json. */
export interface Terminal {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  /** stdout is a terminal and --json is off: live lines (spinner, progress bar) may be redrawn. */
  live: boolean;
  json: boolean;
  verbose: boolean;
  paint: Paint;
}

export interface Paint {
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export function isTty(stream: NodeJS.WritableStream): boolean {
  return Boolean((stream as NodeJS.WriteStream).isTTY);
}

export function createTerminal(
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  options: { json: boolean; verbose: boolean; noColor: boolean },
): Terminal {
  const tty = isTty(out);
  const json = options.json || !tty;
  return { out, err, json, verbose: options.verbose, live: tty && !json, paint: paint(tty && !json && !options.noColor) };
}

export function paint(on: boolean): Paint {
  const sgr = (open: number, close: number) => (text: string) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return { red: sgr(31, 39), yellow: sgr(33, 39), green: sgr(32, 39), cyan: sgr(36, 39), dim: sgr(2, 22), bold: sgr(1, 22) };
}

/** A line that is redrawn in place (carriage return + erase line) until it is settled. */
export class LiveLine {
  private shown = false;

  constructor(private readonly terminal: Terminal) {}

  draw(text: string): void {
    if (!this.terminal.live) return;
    this.terminal.out.write(`\r\x1b[2K${text}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.terminal.out.write('\r\x1b[2K');
    this.shown = false;
  }

  /** Replaces the live line by a permanent one. */
  print(text: string): void {
    this.clear();
    this.terminal.out.write(`${text}\n`);
  }
}

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function progressBar(fraction: number, width = 24): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}
