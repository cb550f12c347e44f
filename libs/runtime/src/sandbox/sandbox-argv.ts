import { existsSync } from 'node:fs';

/** Host directory made visible inside the sandbox. */
export interface SandboxBind {
  host: string;
  /** Path inside the sandbox. */
  path: string;
  writable?: boolean;
}

/**
 * What the sandboxed command may reach over the network.
 * - `none`: its own network namespace with loopback only.
 * - `outbound`: its own network namespace joined to the outside by `pasta` (user-mode TCP/UDP,
 *   no route to the host: `--no-map-gw` keeps the gateway address from meaning the host, and
 *   nothing of the host's loopback is forwarded except `hostPorts`).
 */
export type SandboxNetwork =
  | { kind: 'none' }
  | {
      kind: 'outbound';
      /** Host loopback port forwarded to the same port inside (the edge reaches an app's PORT this way). */
      listenPort?: number;
      /** Ports of the host's loopback the command may reach at 127.0.0.1 inside (the platform's public ports). */
      hostPorts?: number[];
    };

export interface SandboxSpec {
  /** The host uid/gid everything inside runs as (never 0). */
  uid: number;
  gid: number;
  binds: SandboxBind[];
  /** Size of the private writable `/tmp`, bytes. */
  tmpBytes: number;
  /** The whole environment of the command; nothing is inherited. */
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  network: SandboxNetwork;
  /** Shell command (`sh -c`). */
  command: string;
}

/** Read-only system files a Node program needs (resolver, certificates, users). */
const SYSTEM_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/ssl', '/etc/ca-certificates', '/etc/passwd', '/etc/group', '/etc/localtime'];

function portList(ports: number[] | undefined): string {
  return ports && ports.length > 0 ? [...new Set(ports)].sort((a, b) => a - b).join(',') : 'none';
}

/**
 * bubblewrap: new user, pid, ipc, uts, cgroup and mount namespaces (and network, unless pasta made
 * one; no further user namespaces inside), a fresh `/proc` showing only the sandbox's processes, read-only `/usr`, a size-bounded
 * private `/tmp`, `no_new_privs` and no capabilities (bwrap's defaults for an unprivileged
 * caller), and only the binds asked for. Nothing of the host's file system otherwise.
 */
export function bwrapArgs(spec: SandboxSpec, sharedNet: boolean): string[] {
  const args = ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--uid', String(spec.uid), '--gid', String(spec.gid)];
  if (sharedNet) args.push('--share-net');
  args.push('--ro-bind', '/usr', '/usr');
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) if (existsSync(`/usr/${link}`)) args.push('--symlink', `usr/${link}`, `/${link}`);
  for (const path of SYSTEM_FILES) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(spec.tmpBytes), '--tmpfs', '/tmp');
  for (const bind of spec.binds) args.push(bind.writable ? '--bind' : '--ro-bind', bind.host, bind.path);
  args.push('--chdir', spec.cwd, '--clearenv');
  for (const [key, value] of Object.entries(spec.env)) args.push('--setenv', key, value);
  args.push('sh', '-c', spec.command);
  return args;
}

/**
 * The whole command line: `pasta … -- bwrap …` for `outbound` (pasta makes the user and network
 * namespaces as the sandbox's own uid and runs bwrap inside them), plain `bwrap` otherwise.
 * It must be started as `spec.uid`/`spec.gid` (never root).
 */
export function sandboxArgv(spec: SandboxSpec): string[] {
  if (spec.network.kind === 'none') return ['bwrap', ...bwrapArgs(spec, false)];
  const { listenPort, hostPorts } = spec.network;
  return [
    'pasta', '--config-net', '--no-map-gw', '--quiet', '--foreground',
    '-t', listenPort ? `127.0.0.1/${listenPort}` : 'none', '-u', 'none',
    '-T', portList(hostPorts), '-U', 'none',
    '--', 'bwrap', ...bwrapArgs(spec, true),
  ];
}
