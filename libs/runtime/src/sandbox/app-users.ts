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
        await run('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', comment(applicationId), name]);
      } catch (error) {
        if (attempt === 4) throw new SandboxUnavailableError(`could not create the application's own user ${name}: ${((error as { stderr?: string }).stderr ?? (error as Error).message).trim().slice(0, 200)} (the edge must run as root for per-application users)`);
        await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      }
      found = await lookup(name);
    }
    if (!found) throw new SandboxUnavailableError(`the application's own user ${name} could not be created`);
    if (found.gecos !== comment(applicationId)) throw new SandboxUnavailableError(`the user ${name} exists but was not made for this application; refusing to share it`);
    if (found.uid === 0 || found.gid === 0 || this.forbiddenUids.includes(found.uid)) throw new SandboxUnavailableError(`the user ${name} has a privileged or platform uid (${found.uid}); refusing to run as it`);
    const ids = { uid: found.uid, gid: found.gid, name };
    this.known.set(applicationId, ids);
    return ids;
  }
}
