import { createHash, randomBytes } from 'node:crypto';
import {
  close as closeCallback,
  createReadStream,
  createWriteStream,
  fstat as fstatCallback,
  fdatasync as fdatasyncCallback,
  fsync as fsyncCallback,
  open as openCallback,
} from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { BlobNotFoundError, BlobTooLargeError, assertBlobKey, type BlobStat, type BlobStore, type PutOptions, type StoredBlob } from './blob-store.js';

const TEMP_DIR = '.tmp';
const openFd = promisify(openCallback);
const fstatFd = promisify(fstatCallback) as (fd: number, options: { bigint: true }) => Promise<import('node:fs').BigIntStats>;
const fsyncFd = promisify(fsyncCallback);
const fdatasyncFd = promisify(fdatasyncCallback);
const closeFd = promisify(closeCallback);

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
  /** Open descriptors of the directories blobs were renamed into, kept for their fsync (syncDirectory). */
  private readonly directories = new Map<string, Promise<OpenDirectory>>();

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

  /**
   * After the body's last byte every step is a round trip through libuv's thread pool, and
   * under load each costs a turn of a busy event loop, so there are as few as durability
   * allows, one after another: the last write, fdatasync, rename, the directory's fsync (on a
   * descriptor kept open). The temp file is closed alongside the rename, not before it.
   */
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
    // A plain descriptor: the stream must not close it (the fdatasync comes after the last
    // write), and a FileHandle cannot be closed while a stream still holds it.
    const fd = await this.openTemp(temp);
    let closing: Promise<void> | undefined;
    try {
      await pipeline(body, meter, createWriteStream(temp, { fd, autoClose: false }));
      // The data (and the size) reach the disk before the name does, and the directory is
      // synced after the rename, so a put that resolved survives a crash whole (libs/blob README).
      if (this.fsync) await fdatasyncFd(fd);
      closing = closeFd(fd);
      await Promise.all([this.renameInto(temp, target), closing]);
    } catch (error) {
      await (closing ?? closeFd(fd)).catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
    return { bytes, sha256: hash ? hash.digest('hex') : null };
  }

  /**
   * Removes what puts left behind in `.tmp/` when their process died mid-write (a `kill -9`
   * during an upload): `.part` files not written for `olderThanMs`. A put in progress writes as
   * its body arrives, and an upload that sends nothing for its idle timeout is dropped long
   * before, so only orphans are that old. Answers how many files and bytes went.
   */
  async sweepTemp(olderThanMs: number, now = Date.now()): Promise<{ files: number; bytes: number }> {
    const dir = join(this.root, TEMP_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files: 0, bytes: 0 };
      throw error;
    }
    let files = 0;
    let bytes = 0;
    for (const name of names) {
      if (!name.endsWith('.part')) continue;
      const path = join(dir, name);
      const info = await stat(path).catch(() => null);
      if (!info?.isFile() || now - info.mtimeMs < olderThanMs) continue;
      await rm(path, { force: true });
      files++;
      bytes += info.size;
    }
    return { files, bytes };
  }

  private async openTemp(temp: string): Promise<number> {
    try {
      return await openFd(temp, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dirname(temp), { recursive: true });
      return openFd(temp, 'wx', 0o600);
    }
  }

  private async renameInto(temp: string, target: string): Promise<void> {
    const dir = dirname(target);
    try {
      await rename(temp, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true });
      await rename(temp, target);
    }
    if (this.fsync) await this.syncDirectory(dir);
  }

  /**
   * fsyncs `dir`, so that the renames into it done before are durable. The directory stays open
   * between puts (one fsync per put instead of open + fsync + close); a stat of the path, run
   * alongside the fsync, notices when the directory was removed and created again since it
   * was opened, and the new one is then opened and synced.
   */
  private async syncDirectory(dir: string): Promise<void> {
    let opened = this.directories.get(dir);
    if (!opened) {
      opened = openDirectory(dir);
      this.directories.set(dir, opened);
      const attempt = opened;
      attempt.catch(() => {
        if (this.directories.get(dir) === attempt) this.directories.delete(dir);
      });
    }
    const current = await opened;
    const [, now] = await Promise.all([fsyncFd(current.fd), stat(dir, { bigint: true })]);
    if (now.ino === current.ino && now.dev === current.dev) return;
    if (this.directories.get(dir) === opened) this.directories.delete(dir);
    // The old descriptor may still be in use by a concurrent put's fsync: it is left open
    // (a few descriptors at most, only when a directory is replaced under a running store).
    await this.syncDirectory(dir);
  }

  /** Closes the directory descriptors kept for fsync; the store keeps working (it reopens them). */
  async close(): Promise<void> {
    const opened = [...this.directories.values()];
    this.directories.clear();
    for (const directory of await Promise.allSettled(opened)) {
      if (directory.status === 'fulfilled') await closeFd(directory.value.fd).catch(() => undefined);
    }
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

interface OpenDirectory {
  fd: number;
  dev: bigint;
  ino: bigint;
}

/** A plain descriptor (not a FileHandle, which warns when collected while open). */
async function openDirectory(path: string): Promise<OpenDirectory> {
  const fd = await openFd(path, 'r');
  try {
    const info = await fstatFd(fd, { bigint: true });
    return { fd, dev: info.dev, ino: info.ino };
  } catch (error) {
    await closeFd(fd).catch(() => undefined);
    throw error;
  }
}
