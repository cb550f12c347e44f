import { watch, type FSWatcher } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { currentLogSize, parseLogLine, readReleaseLines, type LogLine, type LogQuery } from '@slipway/runtime';

/** Which of `releaseIds` belong to `applicationId` (the platform database decides). */
export type ReleasesOf = (applicationId: string, releaseIds: string[]) => Promise<string[]>;

/** At most this many lines in one answer (the newest ones); the owners' API asks for fewer. */
export const MAX_LOG_LINES = 5000;
/** A follower looks at its files this often even without an inotify event (filesystems without one). */
const RESCAN_MS = 2000;
/** A follower's connection gets a comment this often, so proxies keep it open and a gone client is noticed. */
const KEEPALIVE_MS = 15_000;
const LOG_NAME = /^([0-9a-f-]{36})\.log$/;

/**
 * An application's runtime logs on this edge host: the rings the runtime (supervisor) writes under
 * `<runtime dir>/logs/<releaseId>.log(.1,.2)`, read back by time (`query`) and followed as they are
 * written (`follow`: inotify on the logs directory, each file read from where the last read ended,
 * across rotations by keeping the renamed file's descriptor until it is read to its end).
 */
export class AppLogs {
  private readonly owners = new Map<string, string | null>();

  constructor(
    private readonly dir: string,
    private readonly files: number,
    private readonly releasesOf: ReleasesOf,
  ) {}

  private file(releaseId: string): string {
    return join(this.dir, `${releaseId}.log`);
  }

  /** The application's releases that have a log here (`only`: that one release, if it is the app's). */
  async releases(applicationId: string, only?: string): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const ids = names.map((n) => LOG_NAME.exec(n)?.[1]).filter((id): id is string => id !== undefined && (only === undefined || id === only));
    const unknown = ids.filter((id) => !this.owners.has(id));
    if (unknown.length) {
      const mine = new Set(await this.releasesOf(applicationId, unknown));
      // A release's application never changes; one of another application is remembered as not this one's.
      for (const id of unknown) if (mine.has(id)) this.owners.set(id, applicationId);
    }
    return ids.filter((id) => this.owners.get(id) === applicationId);
  }

  /** The newest `limit` lines within `query`, oldest first, of the application's releases (or one). */
  async query(applicationId: string, query: LogQuery & { release?: string; limit: number }, upTo?: Map<string, number>): Promise<LogLine[]> {
    const releases = await this.releases(applicationId, query.release);
    const all: LogLine[] = [];
    for (const id of releases) all.push(...(await readReleaseLines(this.file(id), this.files, id, query, upTo?.get(id) ?? (upTo ? 0 : undefined))));
    // A stable sort: lines of one release keep their order within a millisecond.
    all.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    return all.slice(-Math.min(query.limit, MAX_LOG_LINES));
  }

  /**
   * Streams the application's lines as NDJSON to `res` while it stays open: first the newest
   * `backlog` lines at or after `since`, then each line as it is written, within a few ms (inotify).
   * New releases (a deploy meanwhile) are picked up when their file appears.
   */
  async follow(applicationId: string, options: { release?: string; since?: number; backlog: number }, res: ServerResponse): Promise<void> {
    const tails = new Map<string, Tail>();
    const offsets = new Map<string, number>();
    for (const id of await this.releases(applicationId, options.release)) offsets.set(id, await currentLogSize(this.file(id)));
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    const send = (lines: LogLine[]) => {
      if (lines.length) res.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    };
    if (options.backlog > 0) send(await this.query(applicationId, { release: options.release, since: options.since, limit: options.backlog }, offsets));
    for (const [id, offset] of offsets) tails.set(id, new Tail(this.file(id), id, offset));
    let busy: Promise<void> = Promise.resolve();
    let closed = false;
    const pump = () => {
      busy = busy
        .then(async () => {
          if (closed) return;
          for (const id of await this.releases(applicationId, options.release)) if (!tails.has(id)) tails.set(id, new Tail(this.file(id), id, 0));
          for (const tail of tails.values()) send(await tail.read());
        })
        .catch(() => undefined);
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(this.dir, { persistent: false }, () => pump());
      watcher.on('error', () => undefined);
    } catch {
      /* no inotify here: the rescan below still follows, every RESCAN_MS */
    }
    const rescan = setInterval(pump, RESCAN_MS);
    const keepalive = setInterval(() => res.write('\n'), KEEPALIVE_MS);
    pump();
    await new Promise<void>((resolve) => res.once('close', resolve));
    closed = true;
    watcher?.close();
    clearInterval(rescan);
    clearInterval(keepalive);
    await busy;
    for (const tail of tails.values()) await tail.close();
  }
}

/** One release's ring followed from an offset: the open descriptor follows its file across a rotation's rename. */
class Tail {
  private handle?: FileHandle;
  private inode?: number;
  private carry = '';

  constructor(
    private readonly file: string,
    private readonly releaseId: string,
    private offset: number,
  ) {}

  /** The whole lines written since the last read. */
  async read(): Promise<LogLine[]> {
    const out: LogLine[] = [];
    for (let turn = 0; turn < 4; turn++) {
      if (!this.handle) {
        this.handle = await open(this.file, 'r').catch(() => undefined);
        if (!this.handle) return out;
        this.inode = (await this.handle.stat()).ino;
      }
      out.push(...(await this.drain(this.handle)));
      // Rotated: the descriptor held the old file (now `.1`), read to its end; go on with the new one from its start.
      const now = await stat(this.file).catch(() => undefined);
      if (!now || now.ino === this.inode) return out;
      await this.handle.close();
      this.handle = undefined;
      this.offset = 0;
      this.carry = '';
    }
    return out;
  }

  private async drain(handle: FileHandle): Promise<LogLine[]> {
    const size = (await handle.stat()).size;
    if (size < this.offset) this.offset = 0;
    if (size === this.offset) return [];
    const buffer = Buffer.alloc(Math.min(size - this.offset, 4 * 1024 * 1024));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
    this.offset += bytesRead;
    const text = this.carry + buffer.subarray(0, bytesRead).toString('utf8');
    const end = text.lastIndexOf('\n') + 1;
    this.carry = text.slice(end);
    return text
      .slice(0, end)
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const line = parseLogLine(l, this.releaseId);
        return { ...line, time: line.time ?? new Date().toISOString() };
      });
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
  }
}
