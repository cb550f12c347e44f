/**
 * What the preflights (the nginx data plane, the build sandbox) share to fix a machine themselves:
 * whether a binary is there, and installing Debian packages from apt as root, with apt's own lines
 * in the launcher's output.
 */
import { spawn, spawnSync } from 'node:child_process';
import { pipeLines } from './log.js';

export function onPath(binary: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

/** The command an operator is told to run (with sudo when we are not root). */
export function aptCommand(packages: string[]): string {
  return `apt-get install -y ${packages.join(' ')}`;
}

function run(file: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    pipeLines('launcher', child.stdout);
    pipeLines('launcher', child.stderr);
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
}

/**
 * `apt-get update`, then the install (waiting up to two minutes for another apt's lock); whether
 * both succeeded. `noServiceStart`: the packages' own services must not start (nginx's on port
 * 80), so a policy-rc.d that refuses them is in place for the install only.
 */
export async function aptInstall(packages: string[], options: { noServiceStart?: boolean } = {}): Promise<boolean> {
  const lock = ['-o', 'DPkg::Lock::Timeout=120'];
  if ((await run('apt-get', [...lock, 'update', '-q'])) !== 0) return false;
  if (!options.noServiceStart) return (await run('apt-get', [...lock, 'install', '-y', '-q', ...packages])) === 0;
  const install = `apt-get ${lock.join(' ')} install -y -q ${packages.join(' ')}`;
  return (
    (await run('sh', [
      '-c',
      `printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; ${install}; status=$?; rm -f /usr/sbin/policy-rc.d; exit $status`,
    ])) === 0
  );
}
