import { lstat, readFile, realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { PRECOMPRESSED_DIR, PRECOMPRESSED_ENCODINGS } from '@slipway/contract';
import { FINGERPRINTED, isForbiddenSegment } from '@slipway/data-plane';
import { resolveInTree } from '@slipway/runtime';
import mime from 'mime-types';
import { directoryLocation, parseRequestPath } from './request-path.js';
import { CACHED_BODY_BYTES, type CachedFile, type PathLookup, type Representation, type StaticCache } from './static-cache.js';
import { READ_NO_FOLLOW, sendFile, sendPlain } from './static-response.js';

const MISSING: PathLookup = { kind: 'missing' };
const REDIRECT: PathLookup = { kind: 'redirect' };
const INDEX = { segments: ['index.html'], directory: false, key: '/index.html' };

/** The body, when it is small enough to keep (read without following a link). */
async function readSmall(abs: string, size: number): Promise<Buffer | undefined> {
  return size <= CACHED_BODY_BYTES ? readFile(abs, { flag: READ_NO_FOLLOW }) : undefined;
}

/**
 * Serves one static release from its extracted directory: content types, index.html for
 * directories, SPA fallback, cache headers (immutable for fingerprinted assets, no-cache for
 * HTML), conditional requests, single byte ranges, and the brotli/gzip forms the build worker
 * precompressed (never compressed here). Paths are decoded once, repeated slashes collapsed, and
 * every `..`, `.`, control character, backslash, `.env*`, `.git` and precompressed-directory
 * segment is refused before touching the file system; links are then followed inside the release
 * only (`resolveInTree`), and a path that leads out answers as one that does not exist (no 301
 * for a directory outside, no different 404). Files are cached by their real path in the release
 * (`StaticCache`), however the request spelled them.
 */
export class StaticSite {
  private rootReal?: string;
  private hasPrecompressed?: Promise<boolean>;
  private readonly building = new Map<string, Promise<CachedFile | null>>();
  private closed = false;

  constructor(
    private readonly releaseId: string,
    private readonly root: string,
    private readonly spaFallback: boolean,
    private readonly cache: StaticCache,
  ) {}

  /** The release is no longer live: its entries leave the cache, and requests in flight add none. */
  close(): void {
    this.closed = true;
    this.cache.dropRelease(this.releaseId);
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendPlain(res, 405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
    const rawPath = (req.url ?? '/').split('?')[0]!;
    const query = (req.url ?? '').slice(rawPath.length);
    const path = parseRequestPath(rawPath);
    if (path.kind === 'refused') return sendPlain(res, 404, 'Not Found\n');
    let found = this.cache.path(this.releaseId, path.key) ?? (await this.lookup(path));
    if (found.kind === 'redirect') {
      res.writeHead(301, { location: directoryLocation(path.segments) + query, 'content-length': 0 });
      return void res.end();
    }
    if (found.kind === 'missing' && this.spaFallback && this.wantsHtml(req, path.segments))
      found = this.cache.path(this.releaseId, INDEX.key) ?? (await this.lookup(INDEX));
    const file = found.kind === 'file' ? (this.cache.file(this.releaseId, found.rel) ?? (await this.file(found.rel))) : null;
    if (!file) return sendPlain(res, 404, 'Not Found\n');
    sendFile(req, res, file);
  }

  private wantsHtml(req: IncomingMessage, segments: string[]): boolean {
    return !extname(segments.at(-1) ?? '') || (req.headers.accept ?? '').includes('text/html');
  }

  /** A path not in the cache: resolved on the file system, then cached. */
  private async lookup(path: { segments: string[]; directory: boolean; key: string }): Promise<PathLookup> {
    const key = path.key;
    const found = await this.resolve(path.segments, path.directory);
    if (!this.closed) this.cache.setPath(this.releaseId, key, found);
    return found;
  }

  private async resolve(segments: string[], directory: boolean): Promise<PathLookup> {
    this.rootReal ??= await realpath(this.root);
    // Links are followed inside the release only: a path that would lead out of it (a link to
    // `..`, to `/etc`, a chain) is answered exactly as a path that does not exist, and nothing
    // outside the release is looked at, so nothing about the host can be learned from answers.
    const resolved = await resolveInTree(this.rootReal, [], segments);
    if (resolved.kind !== 'inside' || !resolved.exists) return MISSING;
    if (resolved.segments.some(isForbiddenSegment)) return { kind: 'refused' };
    const info = await lstat(join(this.rootReal, ...resolved.segments)).catch(() => null);
    if (!info) return MISSING;
    if (info.isDirectory() && !directory) return REDIRECT;
    if (info.isDirectory()) {
      // A directory named index.html is not an index: no redirect back to where the request came from.
      const index = await this.resolve([...segments, 'index.html'], false);
      return index.kind === 'redirect' ? MISSING : index;
    }
    if (!info.isFile()) return MISSING;
    return { kind: 'file', rel: resolved.segments.join('/') };
  }

  /** One build per file at a time, however many requests (and spellings) ask for it at once. */
  private file(rel: string): Promise<CachedFile | null> {
    let pending = this.building.get(rel);
    if (!pending) {
      pending = this.build(rel).finally(() => this.building.delete(rel));
      this.building.set(rel, pending);
    }
    return pending;
  }

  private async build(rel: string): Promise<CachedFile | null> {
    const abs = join(this.rootReal!, ...rel.split('/'));
    const info = await lstat(abs).catch(() => null);
    if (!info?.isFile()) return null;
    const contentType = mime.contentType(extname(abs) || '.bin') || 'application/octet-stream';
    const tag = `${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}`;
    const body = await readSmall(abs, info.size);
    const encoded = await this.precompressed(rel, tag);
    const file: CachedFile = {
      contentType,
      cacheControl: contentType.startsWith('text/html')
        ? 'no-cache'
        : FINGERPRINTED.test(abs)
          ? 'public, max-age=31536000, immutable'
          : 'public, max-age=0, must-revalidate',
      lastModified: info.mtime.toUTCString(),
      identity: { coding: null, abs, size: body?.length ?? info.size, etag: `"${tag}"`, body },
      encoded,
      codings: encoded.map((r) => r.coding!),
    };
    if (!this.closed) this.cache.setFile(this.releaseId, rel, file);
    return file;
  }

  /**
   * The worker's precompressed forms of `rel` (none for a release packed before there were any).
   * They are plain files the worker wrote: one reached through a link, or that is not a regular
   * file, is ignored (the file is then sent as it is).
   */
  private async precompressed(rel: string, tag: string): Promise<Representation[]> {
    this.hasPrecompressed ??= lstat(join(this.rootReal!, PRECOMPRESSED_DIR)).then(
      (info) => info.isDirectory(),
      () => false,
    );
    if (!(await this.hasPrecompressed)) return [];
    const forms = await Promise.all(
      PRECOMPRESSED_ENCODINGS.map(async ({ coding, suffix }): Promise<Representation | null> => {
        const segments = [PRECOMPRESSED_DIR, ...rel.split('/')];
        segments[segments.length - 1] += suffix;
        const resolved = await resolveInTree(this.rootReal!, [], segments);
        if (resolved.kind !== 'inside' || !resolved.exists || resolved.segments.join('/') !== segments.join('/')) return null;
        const abs = join(this.rootReal!, ...segments);
        const info = await lstat(abs).catch(() => null);
        if (!info?.isFile()) return null;
        const body = await readSmall(abs, info.size);
        return { coding, abs, size: body?.length ?? info.size, etag: `"${tag}-${suffix.slice(1)}"`, body };
      }),
    );
    return forms.filter((f): f is Representation => f !== null);
  }
}
