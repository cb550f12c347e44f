import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';

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
      /** Host loopback port forwarded into the namespace (the edge reaches an app's PORT this way). */
      listenPort?: number;
      /**
       * The port inside that `listenPort` reaches, when not the same: where an app that ignores
       * PORT was found listening (the host side stays `listenPort`).
       */
      appPort?: number;
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
  /**
   * The whole environment of the command. It reaches bubblewrap through a pipe (`--args`), never
   * as arguments or as the environment of the processes that set the sandbox up: a command line is
   * readable by every user of the host, and variables such as `LD_PRELOAD` must never reach a
   * process outside the sandbox.
   */
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  network: SandboxNetwork;
  /** Shell command (`sh -c`). */
  command: string;
}

/**
 * Read-only system files a Node program needs (resolver, certificates, users), and Debian's
 * alternatives links (`awk`, `cc`/`c++` for native addons, `which` resolve through them; only
 * links into /usr).
 */
const SYSTEM_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/passwd',
  '/etc/group',
  '/etc/localtime',
  '/etc/alternatives',
];

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
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--uid',
    String(spec.uid),
    '--gid',
    String(spec.gid),
  ];
  if (sharedNet) args.push('--share-net');
  args.push('--ro-bind', '/usr', '/usr');
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) if (existsSync(`/usr/${link}`)) args.push('--symlink', `usr/${link}`, `/${link}`);
  for (const path of SYSTEM_FILES) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(spec.tmpBytes), '--tmpfs', '/tmp');
  for (const bind of spec.binds) args.push(bind.writable ? '--bind' : '--ro-bind', bind.host, bind.path);
  args.push('--chdir', spec.cwd, '--args', String(ARGS_FD));
  args.push('/bin/sh', '-c', spec.command);
  return args;
}

/**
 * The whole command line: `pasta … -- bwrap …` for `outbound` (pasta makes the user and network
 * namespaces as the sandbox's own uid and runs bwrap inside them), plain `bwrap` otherwise.
 * It must be started as `spec.uid`/`spec.gid` (never root).
 */
export function sandboxArgv(spec: SandboxSpec, path?: string): string[] {
  if (spec.network.kind === 'none') return [tool('bwrap', path), ...bwrapArgs(spec, false)];
  const { listenPort, appPort, hostPorts } = spec.network;
  const inbound = listenPort ? `127.0.0.1/${listenPort}${appPort && appPort !== listenPort ? `:${appPort}` : ''}` : 'none';
  return [
    tool('pasta', path),
    '--config-net',
    '--no-map-gw',
    '--quiet',
    '--foreground',
    '-t',
    inbound,
    '-u',
    'none',
    '-T',
    portList(hostPorts),
    '-U',
    'none',
    '--',
    tool('bwrap', path),
    ...bwrapArgs(spec, true),
  ];
}

/** The descriptor bubblewrap reads the environment from (`--args`). */
export const ARGS_FD = 3;

/** The environment the set-up processes (pasta, bubblewrap, the wrappers) run with. */
export const SETUP_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/**
 * What bubblewrap reads on `ARGS_FD`: `--clearenv` and one `--setenv` per declared variable,
 * NUL-separated. Names must be plain identifiers (a NUL in a value cannot be passed and is refused).
 */
export function sandboxEnvArgs(env: Record<string, string>): Buffer {
  const args = ['--clearenv'];
  for (const [key, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || value.includes('\0'))
      throw new Error(`environment variable ${JSON.stringify(key.slice(0, 64))} cannot be passed to the sandbox`);
    args.push('--setenv', key, value);
  }
  return Buffer.from(args.map((a) => `${a}\0`).join(''), 'utf8');
}

/** Where the sandbox's stdout or stderr goes: a pipe to the caller, nowhere, or a descriptor the caller opened (a FIFO). */
export type SandboxOutput = 'pipe' | 'ignore' | number;

/**
 * Starts `argv` (a `sandboxArgv`, optionally behind wrappers that keep descriptor 3 open) with the
 * set-up environment, and hands the sandbox its environment on descriptor 3.
 */
export function spawnSandbox(
  argv: string[],
  env: Record<string, string>,
  options: Omit<SpawnOptions, 'env' | 'stdio'> & {
    stdout?: SandboxOutput;
    /** Default: where stdout goes. */ stderr?: SandboxOutput;
    /** PATH of the set-up processes (the platform's). */ path?: string;
  },
): ChildProcess {
  const data = sandboxEnvArgs(env);
  const { stdout, stderr, path, ...spawnOptions } = options;
  const out = stdout ?? 'pipe';
  const child = spawn(argv[0]!, argv.slice(1), {
    ...spawnOptions,
    env: { ...SETUP_ENV, ...(path ? { PATH: path } : {}) },
    stdio: ['ignore', out, stderr ?? out, 'pipe'],
  });
  const pipe = child.stdio[ARGS_FD] as Writable | null;
  pipe?.on('error', () => undefined);
  pipe?.end(data);
  return child;
}

const TOOL_DIRS = ['/usr/bin', '/usr/sbin', '/bin', '/sbin', '/usr/local/bin', '/usr/local/sbin'];

/**
 * A system tool by absolute path, looked up in the platform's own PATH (`path`, by default this
 * process's; the declared environment's PATH is the tenant's, and may not even hold the tools);
 * the bare name when it is not there, so that starting it fails with ENOENT and the probe says
 * what to install.
 */
export function tool(
  name: 'bwrap' | 'pasta' | 'setpriv' | 'prlimit' | 'ip' | 'nft' | 'nsenter' | 'sysctl',
  path = process.env['PATH'] ?? TOOL_DIRS.join(':'),
): string {
  return (
    path
      .split(':')
      .filter((dir) => dir.startsWith('/'))
      .map((dir) => `${dir}/${name}`)
      .find((file) => existsSync(file)) ?? name
  );
}
