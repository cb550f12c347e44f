import type { IncomingMessage, ServerOptions } from 'node:http';

/**
 * The Node edge's HTTP server options. `insecureHTTPParser: false` explicitly: Node's strict
 * parser (llhttp) refuses with 400 a request with both Content-Length and Transfer-Encoding,
 * repeated or malformed Content-Length, obsolete line folding, a bare CR or a bare LF as a line
 * end, and invalid chunk sizes (RFC 9112 §6); given here, NODE_OPTIONS=--insecure-http-parser
 * cannot loosen it.
 */
export const EDGE_HTTP_OPTIONS: ServerOptions = { keepAliveTimeout: 65_000, insecureHTTPParser: false };

export interface FramingRefusal {
  status: 400 | 501;
  message: string;
}

/**
 * What Node's parser lets through and RFC 9112 §6.1 does not (nginx refuses both itself): a
 * Transfer-Encoding in an HTTP/1.0 request ("MUST treat the message as if the framing is faulty"),
 * and a transfer coding other than `chunked` alone (Node reads `gzip, chunked` as chunked and
 * would pass the coded bytes on as if they were the body: 501, as nginx answers). Null: the
 * request's framing is unambiguous.
 */
export function framingRefusal(req: IncomingMessage): FramingRefusal | null {
  const coding = req.headers['transfer-encoding'];
  if (coding === undefined) return null;
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return { status: 400, message: 'Bad Request: Transfer-Encoding in an HTTP/1.0 request\n' };
  if (coding.trim().toLowerCase() !== 'chunked') return { status: 501, message: 'Not Implemented: the only transfer coding accepted is chunked\n' };
  return null;
}

/** The refusal's status line and headers; the connection closes after it (its framing cannot be trusted). */
export function refusalHead(refusal: FramingRefusal): Record<string, string> {
  return { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(refusal.message)), connection: 'close' };
}

/** The refusal as raw bytes, for a socket that has no response object (an Upgrade request). */
export function refusalBytes(refusal: FramingRefusal): string {
  const head = Object.entries(refusalHead(refusal))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${refusal.status} ${refusal.status === 400 ? 'Bad Request' : 'Not Implemented'}\r\n${head}\r\n${refusal.message}`;
}
