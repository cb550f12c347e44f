import { createReadStream, createWriteStream } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline as chain } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { BlobStore } from '@slipway/blob';
import { sealStream, unsealStream } from '@slipway/crypto';
import type { BackupsRepository } from '@slipway/platform-data';
import { backupLayout, isWalFileName } from './layout.js';

export interface WalArchive {
  blobs: BlobStore;
  backups: BackupsRepository;
  masterKey: string;
}

/**
 * Moves every WAL file the server finished archiving into the spool to the blob store: gzip'd,
 * sealed, catalogued, then removed from the spool (history files first: a restore needs them to
 * follow a timeline). Answers how many files and bytes it shipped.
 */
export async function shipWal(home: string, archive: WalArchive): Promise<{ files: number; bytes: number }> {
  const spool = backupLayout.spool(home);
  const names = (await readdir(spool).catch(() => [] as string[]))
    .filter(isWalFileName)
    .sort((a, b) => Number(b.endsWith('.history')) - Number(a.endsWith('.history')) || a.localeCompare(b));
  let bytes = 0;
  let files = 0;
  for (const name of names) {
    const path = join(spool, name);
    // Opened before it is read: another shipper (an operator's `slipway admin backup` beside the
    // launcher's) may have shipped and removed it since the listing; once open, its removal no
    // longer matters. (A stream opened by path reported that as an 'error' event nobody
    // listened to: it ended the process, the launcher with every service in it.)
    const file = await open(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!file) continue;
    try {
      // chained, not piped: a read error fails the put instead of going unhandled.
      const sealed = chain(
        file.createReadStream({ autoClose: false }),
        createGzip({ level: 3 }),
        sealStream(archive.masterKey, backupLayout.walBinding(name)),
        () => undefined,
      );
      const stored = await archive.blobs.put(backupLayout.walKey(name), sealed, { digest: false });
      await archive.backups.addWal(name, stored.bytes);
      await rm(path, { force: true });
      bytes += stored.bytes;
      files++;
    } finally {
      await file.close();
    }
  }
  return { files, bytes };
}

/** Writes archived WAL files (from the blob store, or still in the spool) into `dir`, plain, for a restore's `restore_command`. */
export async function fetchWal(home: string | undefined, archive: WalArchive, first: string, dir: string): Promise<number> {
  let count = 0;
  for (const { name } of await archive.backups.walFrom(first)) {
    await pipeline(
      await archive.blobs.get(backupLayout.walKey(name)),
      unsealStream(archive.masterKey, backupLayout.walBinding(name)),
      createGunzip(),
      createWriteStream(join(dir, name), { mode: 0o600 }),
    );
    count++;
  }
  if (home) {
    // Files the server archived that the shipper has not moved yet (a restore right after a switch).
    const spool = backupLayout.spool(home);
    for (const name of (await readdir(spool).catch(() => [] as string[])).filter(isWalFileName)) {
      if (name < first && !name.endsWith('.history')) continue;
      await pipeline(createReadStream(join(spool, name)), createWriteStream(join(dir, name), { mode: 0o600 }));
      count++;
    }
  }
  return count;
}

export async function spoolBytes(home: string): Promise<number> {
  const spool = backupLayout.spool(home);
  let total = 0;
  for (const name of await readdir(spool).catch(() => [] as string[])) total += (await stat(join(spool, name)).catch(() => ({ size: 0 }))).size;
  return total;
}
