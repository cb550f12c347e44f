import { spawn } from 'node:child_process';

/** Every character a terminal acts on instead of showing: C0 but newline and tab, DEL, C1 (U+0080–U+009F). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** The sequences the `slipway` CLI itself writes, and only on a terminal: its colours (SGR) and the live line's redraw. */
// eslint-disable-next-line no-control-regex -- the CLI's own escape sequences
export const CLI_OWN_SEQUENCES = [/\x1b\[(?:1|2|22|31|32|33|36|39)m/g, /\r\x1b\[2K/g];
/** What a pty adds to a program's output: `\n` becomes `\r\n` (onlcr). */
export const PTY_LINE_ENDINGS = [/\r\n/g];

/**
 * The control characters in `bytes` (a program's stdout or stderr, decoded as UTF-8 so that a C1
 * character is seen as the code point a terminal would read), once the `allowed` sequences are
 * taken out; each with its offset and the text around it, JSON-escaped to be readable. Empty: a
 * terminal would interpret nothing in it. ESC (0x1b) and BEL (0x07) are single bytes in UTF-8,
 * so none of them can hide inside a multi-byte character.
 */
export function terminalControls(bytes: Buffer | string, allowed: RegExp[] = []): string[] {
  let text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes);
  for (const pattern of allowed) text = text.replace(pattern, '');
  return [...text.matchAll(TERMINAL_CONTROL)]
    .slice(0, 20)
    .map((m) => `U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${m.index}: ${JSON.stringify(text.slice(Math.max(0, m.index - 30), m.index + 30))}`);
}

export interface RawRun {
  code: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * Runs a program to its end and keeps the exact bytes it wrote (no decoding chunk by chunk, which
 * could split a character); killed after `timeoutMs`. With `pty`, it runs under `script` (a real
 * pseudo-terminal: `isTTY` is true, stdout and stderr both arrive on stdout, `\n` as `\r\n`).
 */
export function runForBytes(argv: string[], options: { env: NodeJS.ProcessEnv; pty?: boolean; timeoutMs: number }): Promise<RawRun> {
  const quoted = argv.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  const [command, ...args] = options.pty ? ['script', '-q', '-e', '-c', quoted, '/dev/null'] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
    });
  });
}
