import type { Readable } from 'node:stream';
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, StoredBlob } from '@slipway/blob';
import { sourceFileMode } from '@slipway/blob';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/server';
import tar from 'tar-stream';

export interface WrittenSource extends StoredBlob {
  files: number;
  unpackedBytes: number;
}

const EPOCH = new Date(0);

/**
 * Streams validated files into the normalised source tar (libs/blob README: regular files only,
 * modes 0644/0755, uid/gid 0, mtime 0) and into the blob store. Enforces the file-count, file-size,
 * unpacked-size and compression-ratio limits while the bytes flow, so a bomb is stopped early.
 */
export class SourceTarWriter {
  private readonly pack = tar.pack();
  private readonly output = new PassThrough();
  private readonly stored: Promise<StoredBlob>;
  private files = 0;
  private unpacked = 0;

  /** `compressedBytes`: size of the archive as uploaded, for the compression-ratio limit. */
  constructor(
    blobs: BlobStore,
    key: string,
    private readonly limits: UploadLimits,
    private readonly compressedBytes?: number,
  ) {
    // The store reads a plain Node stream: abort() destroys it with an error, which fails the
    // put (and so keeps nothing) even when the put has not started reading yet.
    this.pack.on('error', () => undefined);
    this.output.on('error', () => undefined);
    this.pack.pipe(this.output);
    this.stored = blobs.put(key, this.output);
    // Observed by finish()/abort(); this handler only keeps an early failure from going unhandled.
    this.stored.catch(() => undefined);
  }

  /** Adds one regular file of `size` bytes; rejects with `too_large` or `bad_archive`. */
  async addFile(path: string, size: number, mode: number | undefined, content: Readable): Promise<void> {
    this.files += 1;
    if (this.files > this.limits.maxFiles) throw new ApiException('too_large', `The source has more than ${this.limits.maxFiles} files.`);
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

  /** Checks the ratio against bytes decompressed so far, including what a parser skips. */
  assertDecompressed(bytes: number): void {
    const { maxCompressionRatio, compressionRatioFloorBytes, maxUnpackedBytes } = this.limits;
    if (bytes > maxUnpackedBytes + 512 * (this.limits.maxFiles + 8)) {
      throw new ApiException('too_large', `The archive unpacks to more than ${maxUnpackedBytes} bytes.`);
    }
    if (this.compressedBytes !== undefined && bytes > compressionRatioFloorBytes && bytes > maxCompressionRatio * this.compressedBytes) {
      throw new ApiException('too_large', `The archive expands more than ${maxCompressionRatio} times; it looks like a compression bomb.`);
    }
  }

  get fileCount(): number {
    return this.files;
  }

  async finish(): Promise<WrittenSource> {
    this.pack.finalize();
    const stored = await this.stored;
    return { ...stored, files: this.files, unpackedBytes: this.unpacked };
  }

  /** Stops writing; the blob store keeps nothing of it. */
  async abort(reason: Error): Promise<void> {
    this.output.destroy(reason);
    this.pack.destroy();
    await this.stored.catch(() => undefined);
  }

  private assertFileSize(path: string, size: number): void {
    if (size > this.limits.maxFileBytes) throw new ApiException('too_large', `"${path}" is larger than ${this.limits.maxFileBytes} bytes.`);
  }

  private assertUnpacked(total: number): void {
    if (total > this.limits.maxUnpackedBytes) throw new ApiException('too_large', `The source unpacks to more than ${this.limits.maxUnpackedBytes} bytes.`);
    this.assertDecompressed(total);
  }
}
