import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AppUsers, type AppIds } from './app-users.js';
import { Cgroups, cgroupEntryArgv, type AppCgroup, type AppLimits } from './cgroups.js';
import { descendants, namespacePids, signal } from './process-tree.js';
import { sandboxArgv, tool, type SandboxBind } from './sandbox-argv.js';
import { SandboxLinks, sandboxAddress, type SandboxSubnet } from './sandbox-link.js';
import { SandboxUnavailableError, probeSandbox } from './sandbox-probe.js';

export interface LocalSandboxOptions {
  limits: AppLimits;
  /** Size of each app's private /tmp. */
  tmpBytes: number;
  /** Host loopback ports apps may reach at 127.0.0.1 (the platform's public ports, the app databases' server). */
  hostPorts: number[];
  /** Uids apps must never get (the platform's own, the build user's). */
  forbiddenUids?: number[];
  /**
   * How the edge reaches a sandboxed app (sandbox-link.ts): `kernel`, a veth pair into its
   * namespace (the start fails with `sandbox_unavailable` when that cannot be made); `pasta`,
   * pasta's user-mode forwarding of the host's 127.0.0.1:PORT; `auto` (the default), `kernel`
   * when its probe passes, else `pasta` (and `onNotice` says why).
   */
  network?: {
    mode: 'auto' | 'kernel' | 'pasta';
    subnet: SandboxSubnet;
    clientUids: () => Promise<number[]>;
    /** How often the host's table is looked at once links exist (SandboxLinks `guardMs`; default 10 s). */
    guardMs?: number;
  };
  /** One line for the operator (the network path chosen). */
  onNotice?: (line: string) => void;
}

/** The path the edge's requests take into sandboxes (see LocalSandboxOptions.network). */
export type SandboxNetworkPath = 'kernel' | 'pasta';

export interface SandboxedProcess {
  /** Start with `spawnSandbox(argv, env, …)` as root: the wrapper drops to the app's user itself. */
  argv: string[];
  env: Record<string, string>;
  cgroup: AppCgroup | null;
}

/** Where the release is inside the sandbox. */
export const APP_ROOT = '/app';

/**
 * The local runtime's sandbox: each application as its own system user, in bubblewrap's
 * namespaces, its release read-only at /app and nothing else of the host, a network namespace of
 * its own joined to the outside by pasta and reached by the edge over a veth pair (sandbox-link.ts;
 * pasta's forwarding where that cannot be made), and a cgroup bounding memory, processes and CPU (or,
 * where cgroups cannot be made, RLIMIT_NPROC for the process count — docs/decisions/runtime-sandbox.md says so).
 */
export class LocalSandbox {
  private readonly users: AppUsers;
  private cgroups?: Promise<Cgroups | null>;
  private probed = false;
  /** Releases directories already made traversable and checked (once each, not at every start). */
  private readonly reachable = new Map<string, Promise<void>>();
  private readonly links?: SandboxLinks;
  private path?: Promise<SandboxNetworkPath>;
  /** Settled `path`, for the synchronous `address`. */
  private settledPath: SandboxNetworkPath = 'pasta';

  constructor(private readonly options: LocalSandboxOptions) {
    this.users = new AppUsers([process.getuid?.() ?? 0, ...(options.forbiddenUids ?? [])]);
    if (options.network && options.network.mode !== 'pasta')
      this.links = new SandboxLinks({
        subnet: options.network.subnet,
        clientUids: options.network.clientUids,
        guardMs: options.network.guardMs,
        onNotice: options.onNotice,
      });
  }

  /** The network path, chosen once (probed for `auto` and `kernel`). */
  networkPath(): Promise<SandboxNetworkPath> {
    this.path ??= this.choosePath();
    return this.path;
  }

  private async choosePath(): Promise<SandboxNetworkPath> {
    const mode = this.options.network?.mode ?? 'pasta';
    if (!this.links || mode === 'pasta') return (this.settledPath = 'pasta');
    const reason = await this.links.probe();
    if (reason === null) {
      this.options.onNotice?.(`sandbox network: the kernel path (veth pairs in ${this.links.subnet.cidr}, nftables); pasta carries the apps' egress only`);
      return (this.settledPath = 'kernel');
    }
    if (mode === 'kernel') {
      this.path = undefined;
      throw new SandboxUnavailableError(`RUNTIME_NETWORK=kernel, and the kernel path cannot be made here: ${reason}`);
    }
    this.options.onNotice?.(`sandbox network: pasta (RUNTIME_NETWORK=auto; the kernel path cannot be made here: ${reason})`);
    return (this.settledPath = 'pasta');
  }

  /** Where the edge reaches the sandboxed release whose PORT is `port` (after `prepare` or `reattach`). */
  address(port: number): string {
    return this.settledPath === 'kernel' && this.links ? sandboxAddress(this.links.subnet, port) : '127.0.0.1';
  }

  /**
   * On the kernel path, joins the sandbox started as `rootPid` to the host (sandbox-link.ts):
   * `port` at its address leads to `appPort` inside. `keep`: a release taken over keeps its link.
   * Nothing to do on pasta's.
   */
  async link(rootPid: number, port: number, appPort: number, keep = false): Promise<void> {
    if ((await this.networkPath()) !== 'kernel' || !this.links) return;
    await this.links.attach(rootPid, port, appPort, keep);
  }

  /** Fails with SandboxUnavailableError (nothing started) when the sandbox cannot be made. */
  async prepare(applicationId: string, releaseId: string, releaseDir: string): Promise<{ ids: AppIds; cgroup: AppCgroup | null }> {
    if (process.getuid?.() !== 0)
      throw new SandboxUnavailableError(
        'apps run as users of their own, which only an edge running as root can create; run the edge as root or set RUNTIME_SANDBOX=off (unsandboxed apps)',
      );
    const ids = await this.users.ensure(applicationId);
    if (!this.probed) {
      const reason = await probeSandbox(ids, { kind: 'outbound' });
      if (reason) throw new SandboxUnavailableError(reason);
      this.probed = true;
    }
    await this.networkPath();
    // Only this app's group may enter its release; the releases directory is traversable, not
    // listable, and every directory above must let other users through (the app's user opens
    // its release before the sandbox hides the rest of the host).
    const releases = dirname(releaseDir);
    let ready = this.reachable.get(releases);
    if (!ready) {
      ready = chmod(releases, 0o711).then(() => assertTraversable(dirname(releases)));
      ready.catch(() => this.reachable.delete(releases));
      this.reachable.set(releases, ready);
    }
    await ready;
    await chown(releaseDir, 0, ids.gid);
    await chmod(releaseDir, 0o750);
    this.cgroups ??= Cgroups.detect();
    const groups = await this.cgroups;
    const cgroup = groups ? await groups.create(`${releaseId}`, this.options.limits) : null;
    return { ids, cgroup };
  }

  /**
   * After a release failed to start: was it the sandbox? Probes again (as the app's user) and
   * returns why the sandbox cannot be made, or null when it works (the app itself failed).
   */
  async recheck(ids: AppIds): Promise<string | null> {
    const reason = await probeSandbox(ids, { kind: 'outbound' });
    if (reason) this.probed = false;
    return reason;
  }

  /** The limits every app's cgroup gets (its memory sizes a Node app's young generation: node-young-generation.ts). */
  get limits(): AppLimits {
    return this.options.limits;
  }

  /**
   * A running release's user and cgroup again, for a process that takes over releases a previous
   * one started (a restarted runtime supervisor): nothing is created or changed, except the
   * application's user, looked up. The cgroup is null when it is gone (or there were none).
   */
  async reattach(applicationId: string, cgroupName: string | null): Promise<{ ids: AppIds; cgroup: AppCgroup | null }> {
    const ids = await this.users.ensure(applicationId);
    await this.networkPath();
    if (cgroupName === null) return { ids, cgroup: null };
    this.cgroups ??= Cgroups.detect();
    const groups = await this.cgroups;
    return { ids, cgroup: groups?.existing(cgroupName, this.options.limits) ?? null };
  }

  /** The host loopback ports a release reaches at 127.0.0.1 in its sandbox (every app's, and `extraHostPorts`). */
  hostPorts(extraHostPorts: number[] = []): number[] {
    return [...new Set([...this.options.hostPorts, ...extraHostPorts])];
  }

  /**
   * `ports.listen`: the host loopback port the edge reaches the app at (its PORT); `ports.app`: the
   * port inside it leads to when the app listens there instead of PORT. Neither is ever taken by a
   * platform port forwarded into the sandbox: the app may listen on both.
   * `extraBinds`: read-only extras (the release's Node.js toolchain at TOOLCHAIN_PATH).
   * `extraHostPorts`: host ports this release alone may reach (its database's pooler).
   * `outliveParent`: the sandbox is not tied to the process that starts it (a runtime supervisor
   * that records it and whose successor takes it over); otherwise it is killed when that process dies.
   */
  command(
    ids: AppIds,
    cgroup: AppCgroup | null,
    releaseDir: string,
    env: Record<string, string>,
    ports: { listen: number; app?: number },
    startCommand: string,
    extraBinds: SandboxBind[] = [],
    extraHostPorts: number[] = [],
    outliveParent = false,
  ): SandboxedProcess {
    const own = new Set([ports.listen, ports.app ?? ports.listen]);
    const spec = {
      uid: ids.uid,
      gid: ids.gid,
      binds: [{ host: releaseDir, path: APP_ROOT }, ...extraBinds.map((b) => ({ ...b, writable: false }))],
      tmpBytes: this.options.tmpBytes,
      env,
      cwd: APP_ROOT,
      network: {
        kind: 'outbound' as const,
        listenPort: ports.listen,
        appPort: ports.app,
        hostPorts: this.hostPorts(extraHostPorts).filter((p) => !own.has(p)),
      },
      command: startCommand,
    };
    // A root shell puts itself into the cgroups (their files are its arguments: it reads no
    // variable), then becomes the app's user: nothing of the app ever runs outside its limits,
    // and nothing of it runs as root. Descriptor 3 (the sandbox's environment) passes through.
    const procs = cgroup ? cgroup.procsFiles : [];
    const nproc = cgroup ? [] : [tool('prlimit'), `--nproc=${this.options.limits.pids}`, '--'];
    // --pdeathsig: if the edge running its apps itself dies, pasta (and with it bubblewrap and the
    // app) goes too, instead of running on unsupervised, outside any restart or stop; the restarted
    // edge starts it again. A runtime supervisor's apps outlive it instead: its successor adopts them.
    const tie = outliveParent ? [] : ['--pdeathsig', 'SIGKILL'];
    const drop = [tool('setpriv'), `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', ...tie, '--'];
    return { argv: cgroupEntryArgv(procs, [...nproc, ...drop, ...sandboxArgv(spec)], 'slipway-app'), env, cgroup };
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

async function assertTraversable(start: string): Promise<void> {
  for (let dir = start; ; dir = dirname(dir)) {
    const mode = (await stat(dir)).mode;
    if ((mode & 0o001) === 0) {
      throw new SandboxUnavailableError(
        `${dir} is not traversable by other users (mode ${(mode & 0o777).toString(8)}), so an application's own user cannot reach its release: run \`chmod o+x ${dir}\` (traversable, not listable) or set RUNTIME_DIR elsewhere`,
      );
    }
    if (dir === dirname(dir)) return;
  }
}

export async function ensureDir(dir: string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
  await chmod(dir, mode);
}
