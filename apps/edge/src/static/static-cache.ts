import type { PrecompressedCoding } from '@slipway/contract';
import { ByteLru } from './byte-lru.js';

/** One way of sending a file: as it is (`coding: null`) or one of its precompressed forms. */
export interface Representation {
  coding: PrecompressedCoding | null;
  /** Link-free real path, opened with O_NOFOLLOW when the body is not held. */
  abs: string;
  size: number;
  etag: string;
  /** Held when it is small enough (`CACHED_BODY_BYTES`). */
  body?: Buffer;
}

/** A file of a release, by its real path inside the release (whatever the request spelling or links). */
export interface CachedFile {
  contentType: string;
  cacheControl: string;
  lastModified: string;
  identity: Representation;
  /** Precompressed forms, in the edge's order of preference, and their codings. */
  encoded: Representation[];
  codings: PrecompressedCoding[];
}

/** What a request path (decoded, slashes collapsed) leads to in a release. */
export type PathLookup = { kind: 'file'; rel: string } | { kind: 'redirect' } | { kind: 'missing' } | { kind: 'refused' };

/** Bodies up to this size are kept in memory (each representation counted on its own). */
export const CACHED_BODY_BYTES = 256 * 1024;
/** Path lookups get this share of the bound; file contents the rest. */
const PATH_SHARE = 1 / 8;
const FILE_OVERHEAD = 512;
const PATH_OVERHEAD = 128;

export interface StaticCacheStats {
  maxBytes: number;
  files: { entries: number; bytes: number; maxBytes: number };
  paths: { entries: number; bytes: number; maxBytes: number };
  /** Entries per release: files and path lookups. */
  releases: Record<string, { files: number; paths: number }>;
}

/**
 * The edge's one cache for every static release: file contents keyed by release and real path
 * (so `//a.js`, `/%61.js` and a link to it share one entry) and path lookups keyed by release and
 * canonical path, each an LRU bounded in bytes (`STATIC_CACHE_MB`). A release's entries are
 * dropped when it stops being live.
 */
export class StaticCache {
  private readonly files: ByteLru<CachedFile>;
  private readonly paths: ByteLru<PathLookup>;

  constructor(readonly maxBytes: number) {
    const pathBytes = Math.floor(maxBytes * PATH_SHARE);
    this.paths = new ByteLru(pathBytes);
    this.files = new ByteLru(maxBytes - pathBytes);
  }

  file(releaseId: string, rel: string): CachedFile | undefined {
    return this.files.get(releaseId, rel);
  }

  setFile(releaseId: string, rel: string, file: CachedFile): void {
    const bodies = [file.identity, ...file.encoded].reduce((sum, r) => sum + (r.body?.length ?? 0), 0);
    this.files.set(releaseId, rel, file, bodies + FILE_OVERHEAD + 2 * rel.length);
  }

  path(releaseId: string, path: string): PathLookup | undefined {
    return this.paths.get(releaseId, path);
  }

  setPath(releaseId: string, path: string, lookup: PathLookup): void {
    const rel = lookup.kind === 'file' ? lookup.rel.length : 0;
    this.paths.set(releaseId, path, lookup, PATH_OVERHEAD + 2 * (releaseId.length + path.length + rel));
  }

  dropRelease(releaseId: string): void {
    this.files.deleteGroup(releaseId);
    this.paths.deleteGroup(releaseId);
  }

  stats(): StaticCacheStats {
    const releases: StaticCacheStats['releases'] = {};
    for (const [id, files] of Object.entries(this.files.groupSizes())) releases[id] = { files, paths: 0 };
    for (const [id, paths] of Object.entries(this.paths.groupSizes())) releases[id] = { files: releases[id]?.files ?? 0, paths };
    return {
      maxBytes: this.maxBytes,
      files: { entries: this.files.size, bytes: this.files.bytes, maxBytes: this.files.maxBytes },
      paths: { entries: this.paths.size, bytes: this.paths.bytes, maxBytes: this.paths.maxBytes },
      releases,
    };
  }
}
