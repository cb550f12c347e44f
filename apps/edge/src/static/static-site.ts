import { constants as fsConstants } from 'node:fs';
import { lstat, open, readFile, realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { resolveInTree } from '@slipway/runtime';
import mime from 'mime-types';

/** Files up to this size are kept in memory (releases are immutable, so nothing goes stale). */
const CACHE_FILE_BYTES = 256 * 1024;
const COMPRESS_MIN_BYTES = 512;
/** The resolved path holds no link; should one appear in its place, the read fails. */
const READ_NO_FOLLOW = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW;
const FINGERPRINTED = /[.-][0-9a-zA-Z_-]{6,}\.(js|mjs|css|woff2?|ttf|otf|png|jpe?g|gif|webp|avif|svg|ico|wasm|map)$/;

interface FileEntry {
  abs: string;
  size: number;
  etag: string;
  lastModified: string;
  contentType: string;
  cacheControl: string;
  compressible: boolean;
  body?: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

type Lookup = { kind: 'file'; file: FileEntry } | { kind: 'redirect'; location: string } | { kind: 'missing' } | { kind: 'refused' };

/** Never served, whatever the release holds. */
export function isForbiddenSegment(segment: string): boolean {
  return segment === '.git' || segment.startsWith('.env') || segment === '.htaccess' || segment === '.DS_Store';
}

function sendPlain(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-content-type-options': 'nosniff', ...headers });
  res.end(body);
}

/** Streams a file too big for the cache; its headers are sent, so a failed open ends the response. */
function streamFile(res: ServerResponse, abs: string, range?: { start: number; end: number }): void {
  open(abs, READ_NO_FOLLOW).then(
    (handle) => handle.createReadStream(range).pipe(res),
    () => res.destroy(),
  );
}

/**
 * Serves one static release from its extracted directory: content types, index.html for
 * directories, SPA fallback, cache headers (immutable for fingerprinted assets, no-cache for
 * HTML), conditional requests, single byte ranges, gzip/brotli. Paths are decoded once and every
 * `..`, NUL, backslash, `.env*` and `.git` segment is refused before touching the file system;
 * links are then followed inside the release only (`resolveInTree`), and a path that leads out
 * answers as one that does not exist (no 301 for a directory outside, no different 404).
 */
export class StaticSite {
  private readonly cache = new Map<string, Promise<Lookup>>();
  private rootReal?: string;

  constructor(
    private readonly root: string,
    private readonly spaFallback: boolean,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendPlain(res, 405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
    const rawPath = (req.url ?? '/').split('?')[0]!;
    const query = (req.url ?? '').slice(rawPath.length);
    let found = await this.lookup(rawPath);
    if (found.kind === 'refused') return sendPlain(res, 404, 'Not Found\n');
    if (found.kind === 'redirect') {
      res.writeHead(301, { location: found.location + query, 'content-length': 0 });
      return void res.end();
    }
    if (found.kind === 'missing' && this.spaFallback && this.wantsHtml(req, rawPath)) found = await this.lookup('/index.html');
    if (found.kind !== 'file') return sendPlain(res, 404, 'Not Found\n');
    this.send(req, res, found.file);
  }

  private wantsHtml(req: IncomingMessage, path: string): boolean {
    return !extname(path) || (req.headers.accept ?? '').includes('text/html');
  }

  private lookup(rawPath: string): Promise<Lookup> {
    let cached = this.cache.get(rawPath);
    if (!cached) {
      cached = this.resolve(rawPath);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(rawPath, cached);
    }
    return cached;
  }

  private async resolve(rawPath: string): Promise<Lookup> {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      return { kind: 'refused' };
    }
    if (!decoded.startsWith('/') || decoded.includes('\0') || decoded.includes('\\')) return { kind: 'refused' };
    const segments = decoded.split('/').filter((s) => s !== '');
    if (segments.some((s) => s === '..' || s === '.' || isForbiddenSegment(s))) return { kind: 'refused' };
    this.rootReal ??= await realpath(this.root);
    // Links are followed inside the release only: a path that would lead out of it (a link to
    // `..`, to `/etc`, a chain) is answered exactly as a path that does not exist, and nothing
    // outside the release is looked at, so nothing about the host can be learned from answers.
    const resolved = await resolveInTree(this.rootReal, [], segments);
    if (resolved.kind !== 'inside' || !resolved.exists) return { kind: 'missing' };
    if (resolved.segments.some(isForbiddenSegment)) return { kind: 'refused' };
    const real = join(this.rootReal, ...resolved.segments);
    const info = await lstat(real).catch(() => null);
    if (!info) return { kind: 'missing' };
    if (info.isDirectory()) {
      if (!decoded.endsWith('/')) return { kind: 'redirect', location: `${rawPath}/` };
      return this.resolve(`${rawPath}index.html`);
    }
    if (!info.isFile()) return { kind: 'missing' };
    const contentType = mime.contentType(extname(real) || '.bin') || 'application/octet-stream';
    const isHtml = contentType.startsWith('text/html');
    const file: FileEntry = {
      abs: real,
      size: info.size,
      etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`,
      lastModified: info.mtime.toUTCString(),
      contentType,
      cacheControl: isHtml ? 'no-cache' : FINGERPRINTED.test(real) ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
      compressible: /^(text\/|application\/(javascript|json|xml|manifest\+json|wasm)|image\/svg\+xml)/.test(contentType),
    };
    if (info.size <= CACHE_FILE_BYTES) {
      file.body = await readFile(real, { flag: READ_NO_FOLLOW });
      if (file.compressible && info.size >= COMPRESS_MIN_BYTES) {
        file.gzip = gzipSync(file.body, { level: 6 });
        file.br = brotliCompressSync(file.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
      }
    }
    return { kind: 'file', file };
  }

  private send(req: IncomingMessage, res: ServerResponse, file: FileEntry): void {
    const headers: Record<string, string | number> = {
      'content-type': file.contentType,
      'cache-control': file.cacheControl,
      etag: file.etag,
      'last-modified': file.lastModified,
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
    };
    if (file.compressible) headers['vary'] = 'accept-encoding';
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, headers);
      return void res.end();
    }
    const head = req.method === 'HEAD';
    const range = req.headers.range;
    if (range) {
      const match = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
      let start = match && match[1] ? Number(match[1]) : NaN;
      let end = match && match[2] ? Number(match[2]) : NaN;
      if (match && !match[1] && match[2]) {
        start = Math.max(file.size - Number(match[2]), 0);
        end = file.size - 1;
      } else if (match && match[1] && !match[2]) end = file.size - 1;
      if (!match || Number.isNaN(start) || Number.isNaN(end) || start > end || start >= file.size) {
        res.writeHead(416, { 'content-range': `bytes */${file.size}`, 'content-length': 0 });
        return void res.end();
      }
      end = Math.min(end, file.size - 1);
      res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${file.size}`, 'content-length': end - start + 1 });
      if (head) return void res.end();
      if (file.body) return void res.end(file.body.subarray(start, end + 1));
      streamFile(res, file.abs, { start, end });
      return;
    }
    const accept = String(req.headers['accept-encoding'] ?? '');
    const encoded = file.br && /\bbr\b/.test(accept) ? { enc: 'br', body: file.br } : file.gzip && /\bgzip\b/.test(accept) ? { enc: 'gzip', body: file.gzip } : null;
    if (encoded) {
      res.writeHead(200, { ...headers, 'content-encoding': encoded.enc, 'content-length': encoded.body.length });
      return void res.end(head ? undefined : encoded.body);
    }
    res.writeHead(200, { ...headers, 'content-length': file.size });
    if (head) return void res.end();
    if (file.body) return void res.end(file.body);
    streamFile(res, file.abs);
  }
}
