/** Prefixed, coloured log lines: `gateway      | listening on …`. */
const COLORS: Record<string, number> = { launcher: 1, postgres: 34, redis: 31, gateway: 36, 'auth-service': 35, edge: 32, 'build-worker': 33, runtime: 92 };
const WIDTH = 12;
const useColor = process.stdout.isTTY && !process.env['NO_COLOR'];

export function prefix(name: string): string {
  const label = name.padEnd(WIDTH);
  return useColor ? `\x1b[${COLORS[name] ?? 37}m${label}\x1b[0m| ` : `${label}| `;
}

export function log(name: string, message: string): void {
  for (const line of message.split('\n')) if (line.trim()) process.stdout.write(`${prefix(name)}${line}\n`);
}

/** Splits a stream into lines and writes each with the process's prefix. */
export function pipeLines(name: string, stream: NodeJS.ReadableStream, onLine?: (line: string) => void): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      process.stdout.write(`${prefix(name)}${line}\n`);
      onLine?.(line);
    }
  });
  stream.on('end', () => {
    if (buffer) process.stdout.write(`${prefix(name)}${buffer}\n`);
  });
}
