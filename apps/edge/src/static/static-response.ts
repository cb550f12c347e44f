import { constants as fsConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { chooseCoding } from './accept-encoding.js';
import type { CachedFile, Representation } from './static-cache.js';

/** The resolved path holds no link; should one appear in its place, the read fails. */
export const READ_NO_FOLLOW = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW;

export function sendPlain(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

/** Streams a body that is not held in memory; its headers are sent, so a failed open ends the response. */
function streamFile(res: ServerResponse, abs: string, range?: { start: number; end: number }): void {
  open(abs, READ_NO_FOLLOW).then(
    (handle) => handle.createReadStream(range).pipe(res),
    () => res.destroy(),
  );
}

function sendBody(res: ServerResponse, head: boolean, rep: Representation, range?: { start: number; end: number }): void {
  if (head) return void res.end();
  if (rep.body) return void res.end(range ? rep.body.subarray(range.start, range.end + 1) : rep.body);
  streamFile(res, rep.abs, range);
}

/** `If-None-Match` (weak comparison, lists, `*`) against the representation about to be sent. */
function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etag));
}

/** A single byte range of the identity representation, `'unsatisfiable'`, or undefined for none. */
function byteRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  let start = match && match[1] ? Number(match[1]) : NaN;
  let end = match && match[2] ? Number(match[2]) : NaN;
  if (match && !match[1] && match[2]) {
    start = Math.max(size - Number(match[2]), 0);
    end = size - 1;
  } else if (match && match[1] && !match[2]) end = size - 1;
  if (!match || Number.isNaN(start) || Number.isNaN(end) || start > end || start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/**
 * Sends one file: the precompressed form the client accepts best (`Content-Encoding`, its own
 * length and ETag, `Vary: Accept-Encoding` whenever the file has such forms), or the file as it
 * is; conditional requests against the ETag of what would be sent; a single byte range of the
 * file as it is.
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: CachedFile): void {
  const headers: Record<string, string | number> = {
    'content-type': file.contentType,
    'cache-control': file.cacheControl,
    'last-modified': file.lastModified,
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
  };
  if (file.encoded.length) headers['vary'] = 'accept-encoding';
  const head = req.method === 'HEAD';
  const rangeHeader = req.headers.range;
  const coding = rangeHeader || file.codings.length === 0 ? null : chooseCoding(req.headers['accept-encoding'], file.codings);
  const rep = coding ? file.encoded[file.codings.indexOf(coding)]! : file.identity;
  headers['etag'] = rep.etag;
  if (rep.coding) headers['content-encoding'] = rep.coding;
  if (notModified(req.headers['if-none-match'], rep.etag)) {
    res.writeHead(304, headers);
    return void res.end();
  }
  if (rangeHeader) {
    const range = byteRange(rangeHeader, rep.size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${rep.size}`, 'content-length': 0 });
      return void res.end();
    }
    res.writeHead(206, { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${rep.size}`, 'content-length': range.end - range.start + 1 });
    return sendBody(res, head, rep, range);
  }
  res.writeHead(200, { ...headers, 'content-length': rep.size });
  sendBody(res, head, rep);
}
