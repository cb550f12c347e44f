import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BackupCorruptError, RestoreTargetNotEmptyError, blobStoreFor, postgresBinaries, restorePlatformBackup, writePlatformBackup } from '@slipway/backup';
import { readRuntimeFile } from '@slipway/config';
import { formatBytes, terminalJson } from '@slipway/contract';
import { openPlatformData } from '@slipway/platform-data';
import { UsageError, parseFlags } from '../args.js';

const REPO_HOME = fileURLToPath(new URL('../../../../.slipway', import.meta.url));

export const ADMIN_BACKUP_USAGE = `Usage: slipway admin backup [--out <file>] [--json]
       slipway admin restore <file> [--home <dir>] [--force] [--json]

backup: the whole platform in one file, now: a base backup of the embedded Postgres (the
platform database and every application's database, their users, sessions and keys), the WAL
that makes it consistent, and every blob (sources, releases). Sealed (AES-256-GCM) with a key
derived from the master key, which is never inside: keep SLIPWAY_MASTER_KEY (or .slipway/master.key)
somewhere else — without it the file cannot be opened. Default file:
<home>/backups/platform/slipway-<time>.backup; copy it off the machine.

restore: into an empty home (SLIPWAY_HOME, --home): the file is checked whole first (a damaged
or foreign file is refused and nothing is written), then the server is rebuilt, the blobs put
back and the master key written as the home's. Then \`pnpm start\` with that home serves every
application, key, secret, domain, release, sign-in service and end user of the backup. Needs
SLIPWAY_MASTER_KEY (the key of the platform the backup came from). --force: a home that already
holds a stopped platform gets its data directory moved aside (never deleted).`;

function homeOf(env: NodeJS.ProcessEnv, given?: string): string {
  return resolve(given ?? env['SLIPWAY_HOME'] ?? REPO_HOME);
}

async function masterKeyOf(env: NodeJS.ProcessEnv, home: string, required: boolean): Promise<string> {
  if (env['SLIPWAY_MASTER_KEY']) return env['SLIPWAY_MASTER_KEY'];
  if (!required && existsSync(join(home, 'master.key'))) return (await readFile(join(home, 'master.key'), 'utf8')).trim();
  throw new UsageError(
    required
      ? 'set SLIPWAY_MASTER_KEY to the master key of the platform the backup came from (the backup is sealed with it and does not hold it)'
      : `no master key: set SLIPWAY_MASTER_KEY or keep ${join(home, 'master.key')}`,
  );
}

export async function adminBackupCommand(
  sub: 'backup' | 'restore',
  args: string[],
  env: NodeJS.ProcessEnv,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    out: { type: 'string' },
    home: { type: 'string' },
    force: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    out.write(`${ADMIN_BACKUP_USAGE}\n`);
    return 0;
  }
  const say = (line: string) => err.write(`  ${line}\n`);
  const started = Date.now();
  if (sub === 'backup') {
    if (positionals.length) throw new UsageError(`admin backup takes no arguments\n\n${ADMIN_BACKUP_USAGE}`);
    const home = homeOf(env, values.home);
    const runtime = readRuntimeFile(home);
    if (!runtime) throw new UsageError(`no running platform in ${home} (runtime.json): start it with \`pnpm start\`, or set SLIPWAY_HOME`);
    const dataDir = join(home, 'pg', 'data');
    if (!existsSync(join(dataDir, 'PG_VERSION')))
      throw new UsageError(
        "the platform runs on the operator's own Postgres (DATABASE_URL): back that server up with its own tools (pg_basebackup, your provider's point-in-time recovery); see docs/guides/backups.md",
      );
    const masterKey = await masterKeyOf(env, home, false);
    const file = resolve(values.out ?? join(home, 'backups', 'platform', `slipway-${new Date().toISOString().replace(/[:.]/g, '-')}.backup`));
    const platform = openPlatformData({ DATABASE_URL: runtime.databaseUrl }, { poolSize: 2 });
    try {
      const result = await writePlatformBackup({
        home,
        serverUrl: runtime.databaseUrl,
        dataDir,
        out: file,
        blobs: blobStoreFor(env, home),
        backups: platform.backups,
        masterKey,
        onProgress: say,
      });
      if (values.json)
        out.write(
          `${terminalJson({ file: result.file, sizeBytes: result.sizeBytes, durationMs: result.durationMs, applications: result.manifest.applications, blobs: result.manifest.blobs, backupId: result.manifest.base.id, consistentAt: result.manifest.base.finishedAt })}\n`,
        );
      else
        out.write(
          `✓ Wrote ${result.file}: ${formatBytes(result.sizeBytes)} in ${(result.durationMs / 1000).toFixed(1)} s (${result.manifest.applications} application database(s), ${result.manifest.blobs} blob(s)). Keep it, and the master key, off this machine.\n`,
        );
      return 0;
    } finally {
      await platform.close();
    }
  }
  if (positionals.length !== 1) throw new UsageError(`admin restore takes the backup file\n\n${ADMIN_BACKUP_USAGE}`);
  const file = resolve(positionals[0]!);
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const home = homeOf(env, values.home);
  const masterKey = await masterKeyOf(env, home, true);
  try {
    const manifest = await restorePlatformBackup({
      file,
      home,
      masterKey,
      binaries: await postgresBinaries(),
      blobs: blobStoreFor(env, home),
      force: values.force,
      onProgress: say,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (values.json)
      out.write(
        `${terminalJson({ home, durationMs: Date.now() - started, applications: manifest.applications, blobs: manifest.blobs, consistentAt: manifest.base.finishedAt })}\n`,
      );
    else
      out.write(
        `✓ Restored the platform as of ${manifest.base.finishedAt} into ${home} in ${seconds} s (${manifest.applications} application database(s), ${manifest.blobs} blob(s)). Start it: SLIPWAY_HOME=${home} pnpm start\n`,
      );
    return 0;
  } catch (error) {
    if (error instanceof BackupCorruptError || error instanceof RestoreTargetNotEmptyError) {
      err.write(`slipway: ${error.message}\n`);
      if (values.json)
        out.write(`${terminalJson({ error: error.message, code: error instanceof BackupCorruptError ? 'backup_corrupt' : 'target_not_empty' })}\n`);
      return error instanceof BackupCorruptError ? 1 : 2;
    }
    throw error;
  }
}
