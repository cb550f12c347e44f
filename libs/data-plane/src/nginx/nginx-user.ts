import { execFile } from 'node:child_process';
import { chmod, chown, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Unix user nginx's workers run as, and its group (nginx's `user` directive). */
export interface NginxWorker {
  name: string;
  group: string;
  uid: number;
  gid: number;
}

/** NGINX_USER's default: a system user of the platform's own. */
export const DEFAULT_NGINX_USER = 'slipway-edge';

/** Names useradd accepts and the config can hold literally. */
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

async function lookup(name: string): Promise<{ uid: number; gid: number } | null> {
  try {
    const { stdout } = await run('getent', ['passwd', name]);
    const [, , uid, gid] = stdout.trim().split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return null;
  }
}

async function groupName(gid: number): Promise<string> {
  const { stdout } = await run('getent', ['group', String(gid)]).catch(() => ({ stdout: '' }));
  const name = stdout.trim().split(':')[0];
  if (!name || !USER_NAME.test(name)) throw new Error(`nginx worker user: group ${gid} has no name nginx can be given`);
  return name;
}

const known = new Map<string, Promise<NginxWorker>>();

/**
 * The unprivileged user nginx's workers run as (NGINX_USER, default `slipway-edge`): a system
 * user of its own, created here (`useradd --system --user-group`, no home, no shell) when it does
 * not exist. Its own, not `nobody` or `www-data`, because the workers read the TLS private keys
 * (nginx-plane certificates are loaded per handshake) and another service sharing the user could
 * read them too. The master (root) binds the ports and writes the pid file; the workers parse
 * every request, so an nginx parser bug no longer runs as root. Refused (throws) for uid 0, and
 * when the user cannot be created: nginx is never started with root workers by default.
 * Only for an edge running as root (otherwise nginx cannot switch users: its workers run as the
 * edge's own user).
 */
export function nginxWorker(name: string): Promise<NginxWorker> {
  let found = known.get(name);
  if (!found) {
    found = resolveWorker(name);
    found.catch(() => known.delete(name));
    known.set(name, found);
  }
  return found;
}

async function resolveWorker(name: string): Promise<NginxWorker> {
  if (!USER_NAME.test(name)) throw new Error(`NGINX_USER ${JSON.stringify(name)} is not a user name nginx can be given`);
  let ids = await lookup(name);
  // Two processes may create it at once (the runtime supervisor's nginx and the edge's TLS store): useradd locks /etc/passwd.
  for (let attempt = 0; !ids && attempt < 5; attempt++) {
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--no-log-init',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      'slipway nginx workers',
      name,
    ]).catch(() => undefined);
    ids = await lookup(name);
    if (!ids) await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
  if (!ids)
    throw new Error(
      `nginx's workers run as the user ${name}, which does not exist and could not be created: create it (useradd --system --user-group ${name}) or set NGINX_USER to an existing unprivileged user`,
    );
  if (ids.uid === 0 || ids.gid === 0)
    throw new Error(`NGINX_USER ${name} is uid ${ids.uid} / gid ${ids.gid}: nginx's workers must not run as root; set NGINX_USER to an unprivileged user`);
  return { name, group: await groupName(ids.gid), ...ids };
}

/**
 * Lets the workers into a root-owned directory they must reach (the plane's state directory: slot
 * markers, temp paths; the TLS directories): owner root, group the workers' group, `mode`
 * (0710: the group traverses, only root lists or writes). Nobody else gets in.
 */
export async function grantWorkers(dir: string, worker: NginxWorker, mode = 0o710): Promise<void> {
  await chown(dir, 0, worker.gid);
  await chmod(dir, mode);
}

/**
 * Throws (one line: which directory, its mode, the fix) unless the workers can pass through every
 * directory above `dir`: without that they cannot see the slot markers (every request would go to
 * one slot) or the static trees (every file a 404), and nginx would not say why.
 */
export async function assertWorkersReach(dir: string, worker: NginxWorker): Promise<void> {
  for (let at = dirname(dir); ; at = dirname(at)) {
    const info = await stat(at);
    const through = info.uid === worker.uid ? info.mode & 0o100 : info.gid === worker.gid ? info.mode & 0o010 : info.mode & 0o001;
    if (!through)
      throw new Error(
        `nginx's workers (user ${worker.name}) cannot pass through ${at} (mode ${(info.mode & 0o777).toString(8)}): run \`chmod o+x ${at}\` (traversable, not listable) or set RUNTIME_DIR elsewhere`,
      );
    if (at === dirname(at)) return;
  }
}
