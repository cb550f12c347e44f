import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import type { UploadLimits } from '@slipway/contract';
import { ApiException } from '@slipway/service-kit';
import type { Request, Response } from 'express';
import { BLOB_STORE } from '../../common/index.js';
import { GATEWAY_CONFIG, uploadLimits, type GatewayConfig } from '../../config.js';
import { readTarArchive, readZipArchive, sniffArchive } from './archive-readers.js';
import { SourceTarWriter, type WrittenSource } from './source-tar-writer.js';
import { receiveUpload, type ReceivedUpload } from './upload-receiver.js';

/** What the archive part became by the time its last byte arrived. */
type ReceivedArchive =
  /** tar / tar.gz: validated and written into the source tar while streaming; not finished yet. */
  | { kind: 'tar'; writer: SourceTarWriter; decompressedBytes: number }
  /** zip: its central directory is at the end, so it is spooled and read afterwards. */
  | { kind: 'zip'; file: string };

/** The stored source, and the deploy's other form field. */
export interface ReceivedSource {
  source: WrittenSource;
  /** The `rootDirectory` field (checked, a trailing `/` trimmed), or null. */
  rootDirectory: string | null;
}

/**
 * Turns a deploy request's body into the normalised source tar in blob storage (libs/blob
 * README), or refuses it with a coded error.
 *
 * A tar or tar.gz archive is validated and written into the source tar *as it arrives*: after
 * its last byte only the end of the tar, the blob's fsync and rename remain. A zip (central
 * directory at the end) and `files` parts (their `paths` may come after them) are spooled to a
 * per-request temp directory, created only when needed and always removed, and read after the
 * upload. A refused source leaves no blob and no spool file.
 */
@Injectable()
export class SourceIntakeService implements OnModuleInit {
  private readonly logger = new Logger('SourceIntake');
  private readonly limits: UploadLimits;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {
    this.limits = uploadLimits(config);
  }

  async onModuleInit(): Promise<void> {
    await mkdir(this.config.UPLOAD_TMP_DIR, { recursive: true });
  }

  async store(req: Request, res: Response, key: string): Promise<ReceivedSource> {
    const spool = new SpoolDir(this.config.UPLOAD_TMP_DIR);
    let streamed: SourceTarWriter | undefined;
    try {
      const upload = await receiveUpload<ReceivedArchive>(req, res, this.limits, {
        archive: async (part, received) => {
          const { kind, stream } = await sniffArchive(part);
          if (!kind) throw new ApiException('bad_archive', 'The archive is not a zip, tar or tar.gz (recognised by content, not by name).');
          if (kind === 'zip') return { kind, file: await spool.write(stream, 'archive.zip') };
          streamed = new SourceTarWriter(this.blobs, key, this.limits, compressedBound(req, received));
          return { kind: 'tar', writer: streamed, decompressedBytes: await readTarArchive(stream, kind === 'tar.gz', streamed, this.limits) };
        },
        file: (part, index) => spool.write(part, `file-${index}`),
      });
      return { source: await this.normalise(upload, key), rootDirectory: upload.rootDirectory };
    } catch (error) {
      // The streamed source tar is not kept when anything is refused, even after its last byte.
      if (streamed) await streamed.abort(error as Error);
      throw error;
    } finally {
      // Cleanup must never turn the answer (a coded 400, say) into a 500.
      await spool.remove().catch((error: Error) => this.logger.warn(`could not remove a spool directory: ${error.message}`));
    }
  }

  private async normalise(upload: ReceivedUpload<ReceivedArchive>, key: string): Promise<WrittenSource> {
    const archive = upload.archive;
    if (!archive) {
      if (upload.files.length === 0 && upload.paths.length === 0)
        throw new ApiException('empty', 'Send the source: repeated "files" with matching "paths", or one "archive".');
      if (upload.files.length !== upload.paths.length) {
        throw new ApiException(
          'paths_mismatch',
          `Got ${upload.files.length} "files" fields but ${upload.paths.length} "paths" fields; send one path per file, in the same order.`,
        );
      }
    }
    const writer = archive?.value.kind === 'tar' ? archive.value.writer : new SourceTarWriter(this.blobs, key, this.limits, () => archive?.bytes);
    try {
      if (!archive) {
        for (const [index, part] of upload.files.entries()) {
          await writer.addFile(upload.paths[index]!, part.bytes, undefined, createReadStream(part.file));
        }
      } else if (archive.value.kind === 'zip') {
        await readZipArchive(archive.value.file, writer, this.limits);
      } else {
        // While streaming, the ratio was judged against a bound on the archive's size; now
        // that the size is known, the exact rule applies (bench/README, docs/decisions/streaming-upload-intake.md).
        writer.assertDecompressed(archive.value.decompressedBytes, archive.bytes);
      }
      if (writer.fileCount === 0) throw new ApiException('empty', 'The archive holds no regular files.');
    } catch (error) {
      await writer.abort(error as Error);
      throw error;
    }
    return writer.finish();
  }
}

/**
 * While a tar.gz arrives, its final size is not known yet. The compression ratio is then judged
 * against the declared Content-Length (an upper bound of the archive's size) or, for a chunked
 * upload, against the archive bytes received so far — the bytes that can justify the output.
 */
function compressedBound(req: Request, received: () => number): () => number {
  const declared = Number(req.headers['content-length'] ?? NaN);
  return Number.isFinite(declared) && declared > 0 ? () => declared : received;
}

/** A per-request temp directory, created on first use (tar and tar.gz uploads never need one). */
class SpoolDir {
  private dir: Promise<string> | undefined;

  constructor(private readonly root: string) {}

  async write(part: Readable, name: string): Promise<string> {
    this.dir ??= this.create();
    const file = join(await this.dir, name);
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    try {
      await pipeline(part, out);
    } catch (error) {
      // Settle only once the file is closed, so removing the directory never races it.
      if (!out.closed) await once(out, 'close').catch(() => undefined);
      throw error;
    }
    return file;
  }

  async remove(): Promise<void> {
    const dir = await this.dir?.catch(() => null);
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  }

  private async create(): Promise<string> {
    const prefix = join(this.root, 'slipway-upload-');
    try {
      return await mkdtemp(prefix);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(this.root, { recursive: true });
      return mkdtemp(prefix);
    }
  }
}
