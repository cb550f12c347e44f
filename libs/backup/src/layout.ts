import { join, resolve } from 'node:path';

/** Where backups live: sealed in the blob store, plus two working folders in the home. */
export const backupLayout = {
  /** The folder the server's `basic_archive` writes each finished WAL file to (the backup service seals and ships them). */
  spool: (home: string) => resolve(home, 'backups', 'wal-spool'),
  /** Scratch servers of restores (removed after each). */
  scratch: (home: string) => resolve(home, 'backups', 'scratch'),
  baseKey: (id: string) => `backups/base/${id}.tar.gz.sealed`,
  labelKey: (id: string) => `backups/base/${id}.label.sealed`,
  walKey: (name: string) => `backups/wal/${name}.gz.sealed`,
  baseBinding: (id: string) => `base:${id}`,
  labelBinding: (id: string) => `label:${id}`,
  walBinding: (name: string) => `wal:${name}`,
  platformBinding: 'platform-backup',
};

/**
 * The server settings that archive WAL into the spool (the embedded server only): every finished
 * WAL file, and a partial one at least every `archiveTimeoutSeconds`, so that a lost disk loses
 * at most that much.
 */
export function archiveSettings(home: string, archiveTimeoutSeconds: number): string[] {
  return [
    '-c',
    'wal_level=replica',
    '-c',
    'archive_mode=on',
    '-c',
    'archive_library=basic_archive',
    '-c',
    `basic_archive.archive_directory=${backupLayout.spool(home)}`,
    '-c',
    `archive_timeout=${archiveTimeoutSeconds}`,
  ];
}

export const isWalFileName = (name: string) =>
  /^[0-9A-F]{24}$/.test(name) || /^[0-9A-F]{8}\.history$/.test(name) || /^[0-9A-F]{24}\.[0-9A-F]{8}\.backup$/.test(name);

export const scratchDir = (home: string, name: string) => join(backupLayout.scratch(home), name);
