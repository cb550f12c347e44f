import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, BlobTooLargeError, assertBlobKey, type BlobStat, type BlobStore, type PutOptions, type StoredBlob } from './blob-store.js';

const TEMP_DIR = '.tmp';

/**
 * Blobs as files under one root directory. A put streams into `<root>/.tmp/` and is renamed
 * into place only once complete (rename is atomic within one file system), so a reader sees
 * either the whole blob or none.
 */
export interface LocalBlobStoreOptions {
  /**
   * fsync each blob before its rename and its directory after (default true): a put that
   * resolved survives a power loss whole. false leaves the flush to the kernel (a crash may
   * then leave a renamed but empty or truncated blob); only for throw-away data.
   */
  fsync?: boolean;
}

export class LocalBlobStore implements BlobStore {
  private readonly fsync: boolean;
  /** Directory fsyncs in flight and queued, per directory (syncDirectory). */
  private readonly dirSyncs = new Map<string, { running: Promise<void> | null; next: Promise<void> | null }>();

  constructor(
    readonly root: string,
    options: LocalBlobStoreOptions = {},
  ) {
    this.fsync = options.fsync ?? true;
  }

  private pathOf(key: string): string {
    assertBlobKey(key);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<StoredBlob> {
    const target = this.pathOf(key);
    const temp = join(this.root, TEMP_DIR, `${randomBytes(12).toString('hex')}.part`);
    const hash = options.digest === false ? null : createHash('sha256');
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes > maxBytes) return callback(new BlobTooLargeError(maxBytes));
        hash?.update(chunk);
        callback(null, chunk);
      },
    });
    // The temp file is opened before a byte of the body is read, so a missing directory is
    // created and the open retried without losing anything (no mkdir on every put).
    const handle = await this.openTemp(temp);
    try {
      // flush: the data is fsync'ed before the file is closed, and the directory after the
      // rename, so a blob that `put` reported stored survives a crash whole (libs/blob README).
      await pipeline(body, meter, createWriteStream(temp, { fd: handle, flush: this.fsync }));
      await this.renameInto(temp, target);
    } catch (error) {
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
    return { bytes, sha256: hash ? hash.digest('hex') : null };
  }

  private async openTemp(temp: string): Promise<FileHandle> {
    try {
      return await open(temp, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dirname(temp), { recursive: true });
      return open(temp, 'wx', 0o600);
    }
  }

  private async renameInto(temp: string, target: string): Promise<void> {
    try {
      await rename(temp, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    }
    if (this.fsync) await this.syncDirectory(dirname(target));
  }

  /**
   * fsyncs `dir` so that renames into it done before this call are durable. Concurrent puts into
   * one directory share syncs (group commit): a caller joins the next sync that starts after it
   * asked (never one already running, which may have missed its rename), so 20 puts at once cost
   * 2 directory syncs instead of 20 (each an open, fsync and close through libuv's thread pool).
   */
  private syncDirectory(dir: string): Promise<void> {
    let state = this.dirSyncs.get(dir);
    if (!state) this.dirSyncs.set(dir, (state = { running: null, next: null }));
    const s = state;
    const start = (): Promise<void> => {
      const running = fsyncDirectory(dir).finally(() => {
        if (s.running === running) s.running = null;
        if (!s.running && !s.next) this.dirSyncs.delete(dir);
      });
      s.running = running;
      return running;
    };
    if (!s.running) return start();
    s.next ??= s.running
      .catch(() => undefined)
      .then(() => {
        s.next = null;
        return start();
      });
    return s.next;
  }

  async get(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    const stream = createReadStream(path);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? new BlobNotFoundError(key) : error));
    });
    return stream;
  }

  async stat(key: string): Promise<BlobStat | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { bytes: info.size, modifiedAt: info.mtime } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (dir === this.root && entry.name === TEMP_DIR) continue;
          await walk(path);
        } else if (entry.isFile()) {
          const key = relative(this.root, path).split(sep).join('/');
          if (key.startsWith(prefix)) keys.push(key);
        }
      }
    };
    await walk(this.root);
    return keys.sort();
  }
}

async function fsyncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
