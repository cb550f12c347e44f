/**
 * A visitor's raw HTTP/1.1 connection to the edge: parts written one by one with pauses between
 * them (each its own packet, as a slow client or `curl -T` sends), read to the close, split into
 * responses. Node's http client would refuse to send most of what the framing attacks send.
 */
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `parts` with `pauseMs` between them and returns every response read until the server closes (`timeoutMs` at most). */
export async function exchange(port: number, parts: (string | Buffer)[], pauseMs: number, timeoutMs = 15_000): Promise<RawReply[]> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<void>((ok) => {
    socket.on('close', () => ok());
    socket.on('error', () => ok());
  });
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  await new Promise((ok) => socket.once('connect', ok));
  for (const part of parts) {
    if (socket.destroyed) break;
    socket.write(part);
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
  await closed;
  clearTimeout(timer);
  return parseResponses(Buffer.concat(chunks).toString('latin1'));
}

/** Responses one after the other, with Content-Length or chunked bodies (at most 10). */
export function parseResponses(text: string): RawReply[] {
  const out: RawReply[] = [];
  let rest = text;
  for (let i = 0; i < 10 && rest.startsWith('HTTP/1.'); i++) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    rest = rest.slice(end + 4);
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (let size = parseInt(rest, 16), n = 0; size > 0 && Number.isFinite(size) && n < 10_000; size = parseInt(rest, 16), n++) {
        const line = rest.indexOf('\r\n');
        body += rest.slice(line + 2, line + 2 + size);
        rest = rest.slice(line + 2 + size + 2);
      }
      rest = rest.slice(rest.indexOf('\r\n\r\n') + 4);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
  }
  return out;
}

/** A chunk of a chunked body: size in hex, CRLF, data, CRLF. */
export function chunk(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
}
