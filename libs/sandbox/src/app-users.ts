import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SandboxUnavailableError } from './sandbox-probe.js';

const run = promisify(execFile);

export interface AppIds {
  uid: number;
  gid: number;
  name: string;
}

/** `slw-` + the last 28 hex digits of the application id: fits useradd's 32 characters. */
export function appUserName(applicationId: string): string {
  const hex = applicationId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`not an application id: ${applicationId}`);
  return `slw-${hex.slice(4)}`;
}

const comment = (applicationId: string) => `slipway app ${applicationId}`;

/**
 * Applications' users and groups come from a range of their own, far from the system's and
 * people's ids: room for many applications, and one range a host firewall rule can name.
 */
export const APP_ID_RANGE = { min: 200_000, max: 299_999 } as const;
const RANGE = [
  '-K',
  `SYS_UID_MIN=${APP_ID_RANGE.min}`,
  '-K',
  `SYS_UID_MAX=${APP_ID_RANGE.max}`,
  '-K',
  `SYS_GID_MIN=${APP_ID_RANGE.min}`,
  '-K',
  `SYS_GID_MAX=${APP_ID_RANGE.max}`,
];

async function lookup(name: string): Promise<{ uid: number; gid: number; gecos: string } | null> {
  try {
    const { stdout } = await run('getent', ['passwd', name]);
    const [, , uid, gid, gecos] = stdout.trim().split(':');
    return { uid: Number(uid), gid: Number(gid), gecos: gecos ?? '' };
  } catch {
    return null;
  }
}

/**
 * Each application runs as a system user of its own (`useradd --system --user-group`), created
 * the first time one of its releases starts. The user's comment names the application, so a name
 * clash or a user someone else made is refused instead of shared. Creation is serialised in this
 * process (useradd locks /etc/passwd and fails when it is busy; it is retried a few times).
 */
export class AppUsers {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly known = new Map<string, AppIds>();

  constructor(private readonly forbiddenUids: number[] = []) {}

  ensure(applicationId: string): Promise<AppIds> {
    const cached = this.known.get(applicationId);
    if (cached) return Promise.resolve(cached);
    const next = this.queue.then(() => this.create(applicationId));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async create(applicationId: string): Promise<AppIds> {
    const name = appUserName(applicationId);
    let found = await lookup(name);
    for (let attempt = 0; !found && attempt < 5; attempt++) {
      try {
        await run('useradd', [
          '--system',
          '--user-group',
          '--no-create-home',
          '--no-log-init',
          ...RANGE,
          '--home-dir',
          '/nonexistent',
          '--shell',
          '/usr/sbin/nologin',
          '--comment',
          comment(applicationId),
          name,
        ]);
      } catch (error) {
        if (attempt === 4)
          throw new SandboxUnavailableError(
            `could not create the application's own user ${name}: ${((error as { stderr?: string }).stderr ?? (error as Error).message).trim().slice(0, 200)} (the edge must run as root for per-application users)`,
          );
        await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      }
      found = await lookup(name);
    }
    if (!found) throw new SandboxUnavailableError(`the application's own user ${name} could not be created`);
    if (found.gecos !== comment(applicationId))
      throw new SandboxUnavailableError(`the user ${name} exists but was not made for this application; refusing to share it`);
    const inRange = (id: number) => id >= APP_ID_RANGE.min && id <= APP_ID_RANGE.max;
    if (!inRange(found.uid) || !inRange(found.gid) || this.forbiddenUids.includes(found.uid))
      throw new SandboxUnavailableError(
        `the user ${name} has uid ${found.uid}/gid ${found.gid}, outside the applications' range ${APP_ID_RANGE.min}–${APP_ID_RANGE.max} or the platform's own; refusing to run as it`,
      );
    const ids = { uid: found.uid, gid: found.gid, name };
    this.known.set(applicationId, ids);
    return ids;
  }
}

/** Removes an application's user and group (tests; an application's deletion). */
export async function removeAppUser(applicationId: string): Promise<void> {
  const name = appUserName(applicationId);
  const found = await lookup(name);
  if (found && found.gecos === comment(applicationId)) await run('userdel', [name]).catch(() => undefined);
}
