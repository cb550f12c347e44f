import type { Readable } from 'node:stream';

/** What `put` reports about the blob it stored. */
export interface StoredBlob {
  bytes: number;
  /** SHA-256 of the stored bytes, hex; null when the put asked for no digest. */
  sha256: string | null;
}

export interface BlobStat {
  bytes: number;
  modifiedAt: Date;
}

export interface PutOptions {
  /** The stream is cut off and nothing is stored once it exceeds this many bytes. */
  maxBytes?: number;
  /** false: do not compute the SHA-256 (a caller that never reads it saves ~0.5 ms per MB). */
  digest?: boolean;
}

/**
 * Content storage for sources and artifacts. Keys are relative, `/`-separated
 * (`sources/<deploymentId>.tar`). A `put` is all or nothing: readers never see a partial blob,
 * and a failed or oversized put leaves nothing behind.
 */
export interface BlobStore {
  put(key: string, body: Readable | AsyncIterable<Uint8Array>, options?: PutOptions): Promise<StoredBlob>;
  /** The blob's bytes; rejects with `BlobNotFoundError` when there is no such blob. */
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<BlobStat | null>;
  exists(key: string): Promise<boolean>;
  /** Deletes the blob; deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** Keys under a prefix (e.g. `sources/`), sorted. */
  list(prefix: string): Promise<string[]>;
}

export class BlobNotFoundError extends Error {
  override readonly name = 'BlobNotFoundError';
  constructor(readonly key: string) {
    super(`no blob ${key}`);
  }
}

export class BlobTooLargeError extends Error {
  override readonly name = 'BlobTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
  }
}

export class InvalidBlobKeyError extends Error {
  override readonly name = 'InvalidBlobKeyError';
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Keys are plain relative paths of safe segments, so no store can be walked out of its root. */
export function isBlobKey(key: string): boolean {
  return key.length <= 512 && key.split('/').every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
}

export function assertBlobKey(key: string): void {
  if (!isBlobKey(key)) throw new InvalidBlobKeyError(`invalid blob key ${JSON.stringify(key)}`);
}
