import { chmod, chown, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AppUsers, type AppIds } from './app-users.js';
import { Cgroups, type AppCgroup, type AppLimits } from './cgroups.js';
import { descendants, namespacePids, signal } from './process-tree.js';
import { sandboxArgv } from './sandbox-argv.js';
import { SandboxUnavailableError, probeSandbox } from './sandbox-probe.js';

export interface LocalSandboxOptions {
  limits: AppLimits;
  /** Size of each app's private /tmp. */
  tmpBytes: number;
  /** Host loopback ports apps may reach at 127.0.0.1 (the platform's public ports, the app databases' server). */
  hostPorts: number[];
  /** Uids apps must never get (the platform's own, the build user's). */
  forbiddenUids?: number[];
}

export interface SandboxedProcess {
  file: string;
  args: string[];
  env: Record<string, string>;
  cgroup: AppCgroup | null;
}

/** Where the release is inside the sandbox. */
export const APP_ROOT = '/app';

/**
 * The local runtime's sandbox: each application as its own system user, in bubblewrap's
 * namespaces, its release read-only at /app and nothing else of the host, a network namespace of
 * its own joined to the outside by pasta, and a cgroup bounding memory, processes and CPU (or,
 * where cgroups cannot be made, RLIMIT_NPROC for the process count — README says so).
 */
export class LocalSandbox {
  private readonly users: AppUsers;
  private cgroups?: Promise<Cgroups | null>;
  private probed = false;

  constructor(private readonly options: LocalSandboxOptions) {
    this.users = new AppUsers([process.getuid?.() ?? 0, ...(options.forbiddenUids ?? [])]);
  }

  /** Fails with SandboxUnavailableError (nothing started) when the sandbox cannot be made. */
  async prepare(applicationId: string, releaseId: string, releaseDir: string): Promise<{ ids: AppIds; cgroup: AppCgroup | null }> {
    if (process.getuid?.() !== 0) throw new SandboxUnavailableError('apps run as users of their own, which only an edge running as root can create; run the edge as root or set RUNTIME_SANDBOX=off (unsandboxed apps)');
    const ids = await this.users.ensure(applicationId);
    if (!this.probed) {
      const reason = await probeSandbox(ids, { kind: 'outbound' });
      if (reason) throw new SandboxUnavailableError(reason);
      this.probed = true;
    }
    // Only this app's group may enter its release; every parent is traversable, not listable.
    for (let dir = dirname(releaseDir), i = 0; i < 2; dir = dirname(dir), i++) await chmod(dir, 0o711).catch(() => undefined);
    await chown(releaseDir, 0, ids.gid);
    await chmod(releaseDir, 0o750);
    this.cgroups ??= Cgroups.detect();
    const groups = await this.cgroups;
    const cgroup = groups ? await groups.create(`${releaseId}`, this.options.limits) : null;
    return { ids, cgroup };
  }

  command(ids: AppIds, cgroup: AppCgroup | null, releaseDir: string, env: Record<string, string>, port: number, startCommand: string): SandboxedProcess {
    const argv = sandboxArgv({
      uid: ids.uid,
      gid: ids.gid,
      binds: [{ host: releaseDir, path: APP_ROOT }],
      tmpBytes: this.options.tmpBytes,
      env,
      cwd: APP_ROOT,
      network: { kind: 'outbound', listenPort: port, hostPorts: this.options.hostPorts.filter((p) => p !== port) },
      command: startCommand,
    });
    // A root shell puts itself into the cgroups, then becomes the app's user: nothing of the app
    // ever runs outside its limits, and nothing of it runs as root.
    const nproc = cgroup ? [] : ['prlimit', `--nproc=${this.options.limits.pids}`, '--'];
    const script = 'for f in $SLIPWAY_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec "$@"';
    return {
      file: '/bin/sh',
      args: ['-c', script, 'slipway-app', ...nproc, 'setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--no-new-privs', '--', ...argv],
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', SLIPWAY_CGROUP_PROCS: cgroup ? cgroup.procsFiles.join(' ') : '' },
      cgroup,
    };
  }

  /**
   * SIGTERM for a graceful stop goes to the app's own processes (inside its pid namespace, not
   * bubblewrap's init or pasta, which would end everything at once); SIGKILL goes to all.
   */
  async signal(rootPid: number, cgroup: AppCgroup | null, name: NodeJS.Signals): Promise<void> {
    const tree = [...new Set([...(await descendants(rootPid)), ...((await cgroup?.pids()) ?? [])])];
    if (name === 'SIGKILL') return signal([rootPid, ...tree], name);
    const inside: number[] = [];
    for (const pid of tree) {
      const ns = await namespacePids(pid);
      if (ns.length >= 2 && ns[ns.length - 1] !== 1) inside.push(pid);
    }
    signal(inside, name);
  }
}

export async function ensureDir(dir: string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
  await chmod(dir, mode);
}
