import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { ApiException } from '@slipway/server';
import type { Request, Response } from 'express';
import { BLOB_STORE } from '../../common/blob-store.provider.js';
import { GATEWAY_CONFIG, uploadLimits, type GatewayConfig } from '../../config.js';
import { detectArchiveKind, readTarArchive, readZipArchive } from './archive-readers.js';
import { SourceTarWriter, type WrittenSource } from './source-tar-writer.js';
import { receiveUpload, type ReceivedUpload } from './upload-receiver.js';

/**
 * Turns a deploy request's body into the normalised source tar in blob storage (libs/blob
 * README), or refuses it with a coded error. Spool files live in a per-request temp directory
 * that is always removed; a refused source leaves no blob.
 */
@Injectable()
export class SourceIntakeService {
  private readonly logger = new Logger('SourceIntake');
  private readonly limits;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {
    this.limits = uploadLimits(config);
  }

  async store(req: Request, res: Response, key: string): Promise<WrittenSource> {
    await mkdir(this.config.UPLOAD_TMP_DIR, { recursive: true });
    const dir = await mkdtemp(join(this.config.UPLOAD_TMP_DIR, 'slipway-upload-'));
    try {
      const upload = await receiveUpload(req, res, dir, this.limits);
      return await this.normalise(upload, key);
    } finally {
      // Cleanup must never turn the answer (a coded 400, say) into a 500.
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }).catch((error: Error) => this.logger.warn(`could not remove ${dir}: ${error.message}`));
    }
  }

  private async normalise(upload: ReceivedUpload, key: string): Promise<WrittenSource> {
    if (!upload.archive) {
      if (upload.files.length === 0 && upload.paths.length === 0) throw new ApiException('empty', 'Send the source: repeated "files" with matching "paths", or one "archive".');
      if (upload.files.length !== upload.paths.length) {
        throw new ApiException('paths_mismatch', `Got ${upload.files.length} "files" fields but ${upload.paths.length} "paths" fields; send one path per file, in the same order.`);
      }
    }
    const kind = upload.archive ? await detectArchiveKind(upload.archive.file) : null;
    if (upload.archive && !kind) throw new ApiException('bad_archive', 'The archive is not a zip, tar or tar.gz (recognised by content, not by name).');
    const writer = new SourceTarWriter(this.blobs, key, this.limits, upload.archive?.bytes);
    try {
      if (!upload.archive) {
        for (const [index, part] of upload.files.entries()) {
          await writer.addFile(upload.paths[index]!, part.bytes, undefined, createReadStream(part.file));
        }
      } else if (kind === 'zip') {
        await readZipArchive(upload.archive.file, writer, this.limits);
      } else {
        await readTarArchive(upload.archive.file, kind === 'tar.gz', writer, this.limits);
      }
      if (writer.fileCount === 0) throw new ApiException('empty', 'The archive holds no regular files.');
    } catch (error) {
      await writer.abort(error as Error);
      throw error;
    }
    return writer.finish();
  }
}
