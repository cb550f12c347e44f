import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { BlobStore } from '@slipway/blob';
import { sealStream, unsealStream } from '@slipway/crypto';
import { openPlatformData } from '@slipway/platform-data';
import { archiveNow, takeBaseBackup } from './base-backup.js';
import { backupLayout } from './layout.js';
import type { PostgresBinaries } from './postgres-binaries.js';
import { BackupCorruptError, corrupt, extractSealedTar, finishRecovery, prepareRecovery, startRecovered, unsealToBuffer } from './recovery.js';
import { shipWal, type WalArchive } from './wal-archive.js';

const FORMAT = 1;

export interface PlatformBackupManifest {
  format: number;
  createdAt: string;
  base: { id: string; walStart: string; finishedAt: string };
  /** The embedded server's superuser password (the restored server's own roles need it). */
  postgresPassword: string;
  wal: string[];
  blobs: number;
  applications: number;
}

export interface PlatformBackupOptions extends WalArchive {
  home: string;
  serverUrl: string;
  dataDir: string;
  /** The file to write (sealed); its folder is created. */
  out: string;
  onProgress?: (line: string) => void;
}

export interface PlatformBackupResult {
  file: string;
  sizeBytes: number;
  durationMs: number;
  manifest: PlatformBackupManifest;
}

/**
 * The whole platform in one sealed file: a base backup of the embedded server (the platform
 * database and every application database, roles included), the WAL that makes it consistent,
 * and every blob (sources, releases). Not the master key: the file is sealed with it, so the
 * operator keeps the key elsewhere and gives it back at restore.
 */
export async function writePlatformBackup(options: PlatformBackupOptions): Promise<PlatformBackupResult> {
  const started = Date.now();
  const say = options.onProgress ?? (() => undefined);
  say('base backup of the embedded Postgres');
  const base = await takeBaseBackup({ ...options, trigger: 'operator', onProgress: undefined });
  await archiveNow(options.serverUrl);
  await shipWal(options.home, options);
  const staging = join(options.home, 'backups', `staging-${base.id}`);
  await mkdir(join(staging, 'wal'), { recursive: true, mode: 0o700 });
  try {
    await copyBlob(options.blobs, backupLayout.baseKey(base.id), join(staging, 'base.tar.gz.sealed'));
    await copyBlob(options.blobs, backupLayout.labelKey(base.id), join(staging, 'label.sealed'));
    const wal = await options.backups.walFrom(base.walStart);
    for (const { name } of wal) await copyBlob(options.blobs, backupLayout.walKey(name), join(staging, 'wal', `${name}.gz.sealed`));
    say(`${wal.length} WAL file(s); copying blobs`);
    const keys = (await options.blobs.list('')).filter((key) => !key.startsWith('backups/'));
    for (const key of keys) await copyBlob(options.blobs, key, join(staging, 'blobs', key));
    const platform = openPlatformData({ DATABASE_URL: options.serverUrl.replace(/\/[^/?]*(\?|$)/, '/slipway$1') }, { poolSize: 1 });
    const applications = await platform.applications.databases
      .listAll()
      .then((rows) => rows.length)
      .finally(() => platform.close());
    const manifest: PlatformBackupManifest = {
      format: FORMAT,
      createdAt: new Date().toISOString(),
      base: { id: base.id, walStart: base.walStart, finishedAt: base.finishedAt.toISOString() },
      postgresPassword: (await readFile(join(options.home, 'pg', 'password'), 'utf8')).trim(),
      wal: wal.map((w) => w.name),
      blobs: keys.length,
      applications,
    };
    await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest), { mode: 0o600 });
    say(`sealing ${keys.length} blob(s), ${applications} application database(s) into ${options.out}`);
    await mkdir(dirname(options.out), { recursive: true });
    const temporary = `${options.out}.part`;
    const tar = spawn('tar', ['-C', staging, '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(tar, 'close') as Promise<[number | null]>;
    await pipeline(tar.stdout, sealStream(options.masterKey, backupLayout.platformBinding), createWriteStream(temporary, { mode: 0o600 }));
    const [code] = await exited;
    if (code !== 0) throw new Error(`tar of the backup failed (exit ${code})`);
    await rename(temporary, options.out);
    return { file: options.out, sizeBytes: (await stat(options.out)).size, durationMs: Date.now() - started, manifest };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function copyBlob(blobs: BlobStore, key: string, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await pipeline(await blobs.get(key), createWriteStream(file, { mode: 0o600 }));
}

export interface PlatformRestoreOptions {
  file: string;
  home: string;
  masterKey: string;
  binaries: PostgresBinaries;
  /** Where the blobs go (the new home's store: its `blobs` folder, or the configured S3 bucket). */
  blobs: BlobStore;
  /** An existing data directory is moved aside (never deleted) instead of refusing. */
  force?: boolean;
  onProgress?: (line: string) => void;
}

export class RestoreTargetNotEmptyError extends Error {
  override readonly name = 'RestoreTargetNotEmptyError';
}

/**
 * Restores a whole-platform backup into a home: the file is opened and checked whole into a
 * staging folder first (a damaged or foreign file is refused before anything else is written),
 * then the server is rebuilt from the base backup and WAL, the blobs put back, and the master key
 * written as this home's. After it, `pnpm start` with this home serves what the backup held.
 */
export async function restorePlatformBackup(options: PlatformRestoreOptions): Promise<PlatformBackupManifest> {
  const say = options.onProgress ?? (() => undefined);
  const dataDir = join(options.home, 'pg', 'data');
  if (existsSync(join(dataDir, 'PG_VERSION'))) {
    if (!options.force)
      throw new RestoreTargetNotEmptyError(
        `${options.home} already holds a platform (pg/data): restore into an empty home, or pass --force to move its data aside first`,
      );
    if (existsSync(join(dataDir, 'postmaster.pid')))
      throw new RestoreTargetNotEmptyError(`${dataDir} belongs to a running server (postmaster.pid): stop the platform first`);
  }
  // Traversable, not listable, as the launcher keeps a home: the server runs as `postgres` under root.
  await mkdir(options.home, { recursive: true, mode: 0o711 });
  await chmod(options.home, 0o711);
  const staging = join(options.home, `restore-staging-${Date.now()}`);
  // Traversable, not listable: the server replaying the backup runs as `postgres` under root.
  await mkdir(staging, { recursive: true, mode: 0o711 });
  await chmod(staging, 0o711);
  try {
    say(`opening ${options.file}`);
    const tar = spawn('tar', ['-C', staging, '-xf', '-', '--no-same-owner', '--ignore-zeros'], { stdio: ['pipe', 'ignore', 'pipe'] });
    const exited = once(tar, 'close') as Promise<[number | null]>;
    try {
      await pipeline(createReadStream(options.file), unsealStream(options.masterKey, backupLayout.platformBinding), tar.stdin);
    } catch (error) {
      tar.kill('SIGKILL');
      throw corrupt(error, options.file);
    }
    const [code] = await exited;
    if (code !== 0) throw new BackupCorruptError(`backup ${options.file} is damaged: its archive does not extract (tar exit ${code})`);
    // The archive's `./` entry carries the mode of the folder it was made from: traversable again.
    await chmod(staging, 0o711);
    const manifest = JSON.parse(await readFile(join(staging, 'manifest.json'), 'utf8')) as PlatformBackupManifest;
    if (manifest.format !== FORMAT) throw new BackupCorruptError(`backup format ${manifest.format} is not one this version reads (${FORMAT})`);
    // Every sealed piece inside is checked before the data directory is written.
    say('checking every piece');
    await verifySealed(join(staging, 'base.tar.gz.sealed'), options.masterKey, backupLayout.baseBinding(manifest.base.id));
    await verifySealed(join(staging, 'label.sealed'), options.masterKey, backupLayout.labelBinding(manifest.base.id));
    for (const name of manifest.wal) await verifySealed(join(staging, 'wal', `${name}.gz.sealed`), options.masterKey, backupLayout.walBinding(name));

    if (existsSync(join(dataDir, 'PG_VERSION'))) {
      const aside = `${dataDir}.before-restore-${Date.now()}`;
      await rename(dataDir, aside);
      say(`moved the existing data directory aside: ${aside}`);
    }
    const work = join(staging, 'server');
    await mkdir(join(work, 'socket'), { recursive: true, mode: 0o700 });
    await mkdir(join(work, 'wal'), { recursive: true, mode: 0o700 });
    await mkdir(join(work, 'data'), { recursive: true, mode: 0o700 });
    say('unpacking the base backup');
    await extractSealedTar(
      createReadStream(join(staging, 'base.tar.gz.sealed')),
      options.masterKey,
      backupLayout.baseBinding(manifest.base.id),
      join(work, 'data'),
    );
    await writeFile(
      join(work, 'data', 'backup_label'),
      await unsealToBuffer(createReadStream(join(staging, 'label.sealed')), options.masterKey, backupLayout.labelBinding(manifest.base.id)),
    );
    for (const name of manifest.wal) {
      await pipeline(
        createReadStream(join(staging, 'wal', `${name}.gz.sealed`)),
        unsealStream(options.masterKey, backupLayout.walBinding(name)),
        createGunzip(),
        createWriteStream(join(work, 'wal', name)),
      );
    }
    await prepareRecovery(join(work, 'data'), join(work, 'wal'), 'end');
    say(`replaying ${manifest.wal.length} WAL file(s)`);
    const server = await startRecovered(options.binaries, join(work, 'data'), join(work, 'socket'), work);
    try {
      // The catalogue describes the backups of the home this came from, not this one's store.
      const platform = openPlatformData({ DATABASE_URL: server.url('slipway') }, { poolSize: 1 });
      await platform.backups.forgetAll().finally(() => platform.close());
    } finally {
      await server.stop();
    }
    await finishRecovery(join(work, 'data'));
    await mkdir(join(options.home, 'pg'), { recursive: true, mode: 0o755 });
    await rename(join(work, 'data'), dataDir);
    await writeFile(join(options.home, 'pg', 'password'), manifest.postgresPassword, { mode: 0o600 });
    say(`putting back ${manifest.blobs} blob(s)`);
    const blobRoot = join(staging, 'blobs');
    for (const key of await listFiles(blobRoot)) await options.blobs.put(key, createReadStream(join(blobRoot, key)), { digest: false });
    await writeFile(join(options.home, 'master.key'), options.masterKey, { mode: 0o600 });
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function verifySealed(file: string, masterKey: string, binding: string): Promise<void> {
  try {
    await unsealToBuffer(createReadStream(file), masterKey, binding, false);
  } catch (error) {
    throw corrupt(error, binding);
  }
}

async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await listFiles(root, key)));
    else files.push(key);
  }
  return files;
}
