import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, StoredBlob } from '@slipway/blob';
import { createGzip } from 'node:zlib';
import { SOURCE_GZIP_LEVEL, SOURCE_LINK_MODE, sourceFileMode } from '@slipway/blob';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
import tar from 'tar-stream';

export interface WrittenSource extends Omit<StoredBlob, 'sha256'> {
  /** Regular files. */
  files: number;
  links: number;
  unpackedBytes: number;
}

const EPOCH = new Date(0);
/** tar-stream hands over many small chunks (512-byte headers, padding, slices of the input);
 *  the blob file is written in pieces of this size instead, one system call each. */
const WRITE_BATCH_BYTES = 256 * 1024;

/**
 * Gathers chunks into writes of at least WRITE_BATCH_BYTES (memory stays bounded by that).
 * One write per 256 KiB instead of dozens per MB is what makes the blob write cheap: each
 * file-system write is a round trip through libuv's thread pool.
 */
class WriteBatcher extends Transform {
  private chunks: Buffer[] = [];
  private size = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= WRITE_BATCH_BYTES) this.release();
    callback();
  }

  override _flush(callback: (error?: Error | null) => void): void {
    if (this.size > 0) this.release();
    callback();
  }

  private release(): void {
    this.push(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size));
    this.chunks = [];
    this.size = 0;
  }
}

/** The size the compression ratio is judged against: the archive's size as uploaded, or
 *  while it is still arriving, a bound on it (see readTarStream). */
export type CompressedSize = () => number | undefined;

/**
 * Streams validated files and links into the normalised source tar (libs/blob README: regular
 * files and relative symbolic links, modes 0644/0755, uid/gid 0, mtime 0), gzip-compressed, and
 * into the blob store. Enforces the file-count, file-size,
 * unpacked-size and compression-ratio limits while the bytes flow, so a bomb is stopped early.
 */
export class SourceTarWriter {
  private readonly pack = tar.pack();
  /** The stored source is compressed (libs/blob source format): its size is what an owner stores. */
  private readonly gzip = createGzip({ level: SOURCE_GZIP_LEVEL });
  private readonly output = new WriteBatcher();
  private readonly stored: Promise<StoredBlob>;
  private files = 0;
  private links = 0;
  private unpacked = 0;

  /** `compressedBytes`: size of the archive as uploaded, for the compression-ratio limit. */
  constructor(
    blobs: BlobStore,
    key: string,
    private readonly limits: UploadLimits,
    private readonly compressedBytes: CompressedSize = () => undefined,
  ) {
    // The store reads a plain Node stream: abort() destroys it with an error, which fails the
    // put (and so keeps nothing) even when the put has not started reading yet.
    this.pack.on('error', () => undefined);
    this.gzip.on('error', () => undefined);
    this.output.on('error', () => undefined);
    this.pack.pipe(this.gzip).pipe(this.output);
    this.stored = blobs.put(key, this.output, { digest: false });
    // Observed by finish()/abort(); this handler only keeps an early failure from going unhandled.
    this.stored.catch(() => undefined);
  }

  /** Adds one regular file of `size` bytes; rejects with `too_large` or `bad_archive`. */
  async addFile(path: string, size: number, mode: number | undefined, content: Readable): Promise<void> {
    this.files += 1;
    this.assertEntries();
    this.assertFileSize(path, size);
    this.assertUnpacked(this.unpacked + size);
    let written = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        written += chunk.length;
        this.unpacked += chunk.length;
        try {
          if (written > size) throw new ApiException('bad_archive', `"${path}" holds more bytes than its header declares.`);
          this.assertFileSize(path, written);
          this.assertUnpacked(this.unpacked);
        } catch (error) {
          return callback(error as Error);
        }
        callback(null, chunk);
      },
    });
    const entry = this.pack.entry({ name: path, size, mode: sourceFileMode(mode), mtime: EPOCH, uid: 0, gid: 0, type: 'file' });
    await pipeline(content, meter, entry as unknown as NodeJS.WritableStream);
    if (written !== size) throw new ApiException('bad_archive', `"${path}" holds fewer bytes than its header declares.`);
  }

  /** Adds one symbolic link whose target the caller checked (ArchiveEntryPaths). Links count as files toward `maxFiles`. */
  async addLink(path: string, target: string): Promise<void> {
    this.links += 1;
    this.assertEntries();
    await new Promise<void>((resolve, reject) => {
      this.pack.entry({ name: path, type: 'symlink', linkname: target, mode: SOURCE_LINK_MODE, mtime: EPOCH, uid: 0, gid: 0 }, (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  /** Checks the ratio against bytes decompressed so far, including what a parser skips. */
  assertDecompressed(bytes: number, compressedBytes = this.compressedBytes()): void {
    const { maxCompressionRatio, compressionRatioFloorBytes, maxUnpackedBytes } = this.limits;
    if (bytes > maxUnpackedBytes + 512 * (this.limits.maxFiles + 8)) {
      throw new ApiException('too_large', `The archive unpacks to more than ${maxUnpackedBytes} bytes.`);
    }
    if (compressedBytes !== undefined && bytes > compressionRatioFloorBytes && bytes > maxCompressionRatio * compressedBytes) {
      throw new ApiException('too_large', `The archive expands more than ${maxCompressionRatio} times; it looks like a compression bomb.`);
    }
  }

  get fileCount(): number {
    return this.files;
  }

  async finish(): Promise<WrittenSource> {
    this.pack.finalize();
    const stored = await this.stored;
    return { bytes: stored.bytes, files: this.files, links: this.links, unpackedBytes: this.unpacked };
  }

  /** Stops writing; the blob store keeps nothing of it. */
  async abort(reason: Error): Promise<void> {
    this.output.destroy(reason);
    this.gzip.destroy();
    this.pack.destroy();
    await this.stored.catch(() => undefined);
  }

  private assertEntries(): void {
    if (this.files + this.links > this.limits.maxFiles) throw new ApiException('too_large', `The source has more than ${this.limits.maxFiles} files.`);
  }

  private assertFileSize(path: string, size: number): void {
    if (size > this.limits.maxFileBytes) throw new ApiException('too_large', `"${path}" is larger than ${this.limits.maxFileBytes} bytes.`);
  }

  private assertUnpacked(total: number): void {
    if (total > this.limits.maxUnpackedBytes) throw new ApiException('too_large', `The source unpacks to more than ${this.limits.maxUnpackedBytes} bytes.`);
    this.assertDecompressed(total);
  }
}
