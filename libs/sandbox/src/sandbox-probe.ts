import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { sandboxArgv, spawnSandbox, type SandboxNetwork } from './sandbox-argv.js';

/** The sandbox cannot be made here; nothing ran. The message says what is missing and how to fix it. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
  readonly code = 'sandbox_unavailable' as const;
}

/** What the operator should do, from what the failed probe printed. */
export function explainSandboxFailure(output: string, missing?: string): string {
  if (missing === 'bwrap') return 'bubblewrap (bwrap) is not installed: run `apt-get install -y bubblewrap`';
  if (missing === 'pasta') return 'pasta is not installed: run `apt-get install -y passt`';
  if (/\btun\b/i.test(output) && !existsSync('/dev/net/tun'))
    return '/dev/net/tun does not exist (pasta needs it): load the module (`modprobe tun`), or give the container the device (`--device /dev/net/tun`)';
  if (/\btun\b/i.test(output)) return '/dev/net/tun cannot be opened by an unprivileged user (pasta needs it): run `chmod 0666 /dev/net/tun`';
  if (/namespace|Operation not permitted|setting up uid map/i.test(output)) {
    // Some keys exist on some kernels only (sysctl -w fails on a missing one): each is named on its own.
    return `bwrap cannot create namespaces here (${firstLine(output)}): allow unprivileged user namespaces: \`sysctl -w user.max_user_namespaces=15000\`, and where the key exists \`sysctl -w kernel.unprivileged_userns_clone=1\` (kernels with Debian's patch) or \`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\` (Ubuntu 23.10+); in a container, allow them in its seccomp/AppArmor profile`;
  }
  return `the sandbox failed to start: ${firstLine(output) || 'no output'}`;
}

function firstLine(output: string): string {
  return (
    output
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line && !/syslog/i.test(line)) ?? ''
  ).slice(0, 200);
}

/**
 * Runs `true` in a sandbox exactly as builds and apps are run (same namespaces, same network
 * plumbing, as `uid`) and resolves with null when it works, or the reason it does not.
 * `path` is where pasta and bwrap are looked up (the caller's PATH by default).
 */
export async function probeSandbox(
  ids: { uid: number; gid: number },
  network: SandboxNetwork,
  timeoutMs = 10_000,
  path = process.env['PATH'] ?? '/usr/bin:/bin',
): Promise<string | null> {
  const first = await probeOnce(ids, network, timeoutMs, path);
  // A SIGTERM/SIGINT meant for the caller's process group can hit the probe while it is being
  // spawned (before it leaves the group): that says nothing about the sandbox, so probe again.
  return first === STRAY_SIGNAL ? probeOnce(ids, network, timeoutMs, path) : first;
}

const STRAY_SIGNAL = 'the probe was stopped by a signal sent to its parent';

function probeOnce(ids: { uid: number; gid: number }, network: SandboxNetwork, timeoutMs: number, path: string): Promise<string | null> {
  const spec = { ...ids, binds: [], tmpBytes: 1 << 20, env: { PATH: '/usr/bin:/bin' }, cwd: '/', network, command: 'exit 0' };
  const argv = sandboxArgv(spec, path);
  return new Promise((resolve) => {
    // Its own process group: a SIGTERM to the caller's group (a service being stopped) must not
    // kill the probe and make a working sandbox look broken.
    const child = spawnSandbox(argv, spec.env, { ...ids, detached: true, path });
    let output = '';
    const collect = (chunk: Buffer) => {
      if (output.length < 4000) output += chunk.toString('utf8');
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(explainSandboxFailure(error.message, error.code === 'ENOENT' ? basename(argv[0]!) : undefined));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(null);
      if (signal === 'SIGKILL') return resolve(`the sandbox did not start within ${timeoutMs} ms`);
      if (signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGHUP') return resolve(STRAY_SIGNAL);
      // pasta runs bwrap: a missing bwrap shows up as pasta's "No such file" output.
      if (basename(argv[0]!) === 'pasta' && /bwrap.*(No such file|not found)|execvp/i.test(output)) return resolve(explainSandboxFailure(output, 'bwrap'));
      resolve(explainSandboxFailure(output));
    });
  });
}
