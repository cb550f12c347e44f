import { createInterface } from 'node:readline/promises';

/** The streams a command talks through (the real process's in main.ts, pipes in tests). */
export interface CommandIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  input: NodeJS.ReadableStream;
}

/** Asks a yes/no question on a terminal; Enter means yes. */
export async function confirm(io: CommandIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.input, output: io.out, terminal: true });
  try {
    const answer = (await rl.question(`${question} [Y/n] `)).trim().toLowerCase();
    return answer === '' || answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

export function isInteractive(io: CommandIo): boolean {
  return Boolean((io.input as NodeJS.ReadStream).isTTY && (io.out as NodeJS.WriteStream).isTTY);
}
