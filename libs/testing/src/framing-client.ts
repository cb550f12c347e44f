/**
 * The attacker's side of request framing (RFC 9112 §6): bodies written in several packets with
 * pauses between them, requests whose framing two parsers could read differently, and an app that
 * says what it received. Shared by the nginx plane's (libs/data-plane) and the Node edge's specs:
 * `import { framing } from '@slipway/testing'`.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { exchange as rawExchange, type RawReply } from './raw-exchange.js';

export type Reply = RawReply;

/** The next request on the same connection (closing it), after the one under test. */
export const AFTER = (host: string) => `GET /after HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** Requests whose framing two parsers could read differently (RFC 9112 §6, §2.2, §5.2, §7.1): each must be refused at the edge. */
export const AMBIGUOUS = (host: string): Record<string, string> => {
  const h = `Host: ${host}\r\nConnection: close\r\n`;
  return {
    'Content-Length and Transfer-Encoding': `POST /ambiguous/cl-te HTTP/1.1\r\n${h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'Transfer-Encoding twice': `POST /ambiguous/te-te HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'Transfer-Encoding in HTTP/1.0': `POST /ambiguous/te-http10 HTTP/1.0\r\n${h}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'space before the colon': `POST /ambiguous/te-space HTTP/1.1\r\n${h}Transfer-Encoding : chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'Content-Length twice': `POST /ambiguous/cl-cl HTTP/1.1\r\n${h}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`,
    'Content-Length list': `POST /ambiguous/cl-list HTTP/1.1\r\n${h}Content-Length: 5, 5\r\n\r\nhello`,
    'Content-Length with a sign': `POST /ambiguous/cl-sign HTTP/1.1\r\n${h}Content-Length: +5\r\n\r\nhello`,
    'obsolete line folding (space)': `POST /ambiguous/fold-sp HTTP/1.1\r\n${h}X-Pad: 1\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello`,
    'obsolete line folding (tab)': `POST /ambiguous/fold-tab HTTP/1.1\r\n${h}Transfer-Encoding:\r\n\tchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'bare CR': `POST /ambiguous/bare-cr HTTP/1.1\r\n${h}X-Pad: 1\rContent-Length: 5\r\n\r\nhello`,
    'chunk size not hex': `POST /ambiguous/chunk-zz HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`,
    'chunk size negative': `POST /ambiguous/chunk-neg HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n`,
    'chunk size 0x': `POST /ambiguous/chunk-0x HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n`,
    'chunk size overflowing': `POST /ambiguous/chunk-huge HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n1000000000000000000005\r\nhello\r\n0\r\n\r\n`,
    'chunk shorter than its size': `POST /ambiguous/chunk-short HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n`,
    'unknown coding (gzip, chunked)': `POST /ambiguous/te-gzip HTTP/1.1\r\n${h}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    'unknown coding (identity)': `POST /ambiguous/te-identity HTTP/1.1\r\n${h}Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\nhello`,
  };
};

export interface Seen {
  url: string;
  bytes: number;
  te?: string;
  cl?: string;
}

/** An app that answers, per request, the byte count of the body it read and the framing headers it got; it also keeps what its parser refused. */
export async function framingEcho(): Promise<{ server: Server; port: number; seen: Seen[]; errors: string[] }> {
  const seen: Seen[] = [];
  const errors: string[] = [];
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      const record = { url: req.url!, bytes, te: req.headers['transfer-encoding'], cl: req.headers['content-length'] };
      seen.push(record);
      res.end(JSON.stringify(record));
    });
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    errors.push(error.code ?? error.message);
    socket.destroy();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as { port: number }).port, seen, errors };
}

/** Writes `parts` on one connection with `pauseMs` between them, reads to the close (5 s at most), split into responses. */
export function exchange(port: number, parts: (string | Buffer)[], pauseMs: number): Promise<Reply[]> {
  return rawExchange(port, parts, pauseMs, 5000);
}
