import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalBlobStore, type BlobStore } from '@slipway/blob';
import { PeriodicTask } from '@slipway/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config.js';
import { BLOB_STORE } from './blob-store.provider.js';

/** Older than this, a `.part` or spool directory belongs to no live upload (they write as bytes arrive; a silent one is dropped after its idle timeout). */
const STALE_MS = 3600_000;
const SWEEP_EVERY_MS = 3600_000;

/**
 * What uploads leave behind when a gateway process dies mid-upload (`kill -9`, the machine
 * going down): the blob store's `.part` files and the `slipway-upload-*` spool directories of
 * zip uploads under `UPLOAD_TMP_DIR`. Removed at start and every hour once an hour old, so a
 * crash loop under uploads cannot fill the disk. An S3 store needs nothing: an unfinished
 * multipart upload is aborted by the store's own lifecycle rule.
 */
@Injectable()
export class UploadLeftovers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('uploads');
  private readonly task = new PeriodicTask(
    () => this.sweep(),
    (error) => this.logger.warn(`could not remove what interrupted uploads left: ${error.message}`),
  );

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  onApplicationBootstrap(): void {
    this.task.start(SWEEP_EVERY_MS, 0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  async sweep(now = Date.now()): Promise<{ parts: number; spools: number; bytes: number }> {
    const parts = this.blobs instanceof LocalBlobStore ? await this.blobs.sweepTemp(STALE_MS, now) : { files: 0, bytes: 0 };
    const spools = await this.sweepSpools(now);
    if (parts.files || spools)
      this.logger.log(
        `removed what interrupted uploads left: ${parts.files} partial blob(s) (${parts.bytes} bytes), ${spools} spool director${spools === 1 ? 'y' : 'ies'}`,
      );
    return { parts: parts.files, spools, bytes: parts.bytes };
  }

  private async sweepSpools(now: number): Promise<number> {
    const root = this.config.UPLOAD_TMP_DIR;
    const names = await readdir(root).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      if (!name.startsWith('slipway-upload-')) continue;
      const path = join(root, name);
      const info = await stat(path).catch(() => null);
      if (!info?.isDirectory()) continue;
      // The spooled archive inside is written as it arrives: the newest write counts.
      const inside = await readdir(path).catch(() => [] as string[]);
      const times = await Promise.all(
        inside.map((entry) =>
          stat(join(path, entry)).then(
            (s) => s.mtimeMs,
            () => 0,
          ),
        ),
      );
      if (now - Math.max(info.mtimeMs, ...times) < STALE_MS) continue;
      await rm(path, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }
}
