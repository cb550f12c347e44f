import { spawn, spawnSync } from 'node:child_process';
import { StartupError } from './errors.js';
import { log, pipeLines } from './log.js';

const PACKAGES = ['nginx-light', 'libnginx-mod-http-brotli-static'];
const NODE_PLANE = 'or set EDGE_DATA_PLANE=node to serve apps with the Node edge alone';

function nginxInstalled(): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0;
}

function onPath(binary: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
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
 * EDGE_DATA_PLANE=nginx (the default): nginx (Debian's nginx-light, with the brotli_static
 * module) serves the apps. As root on Debian/Ubuntu it is installed from apt when missing (as the
 * build sandbox is); otherwise `pnpm start` stops with one line naming the command. The Debian
 * package's own nginx service is not used (Slipway runs its own master on EDGE_PORT).
 */
export async function nginxPreflight(): Promise<void> {
  if (nginxInstalled()) return;
  const command = `apt-get install -y ${PACKAGES.join(' ')}`;
  if (process.getuid?.() !== 0 || !onPath('apt-get')) {
    throw new StartupError(`the nginx data plane needs nginx, which is not installed: run \`sudo ${command}\`, ${NODE_PLANE}`);
  }
  log('launcher', `installing the nginx data plane: apt-get update && ${command}`);
  // policy-rc.d 101: the package must not start Debian's own nginx on port 80.
  const ok = (await run('apt-get', ['-o', 'DPkg::Lock::Timeout=120', 'update', '-q'])) === 0 && (await run('sh', ['-c', `printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; apt-get -o DPkg::Lock::Timeout=120 install -y -q ${PACKAGES.join(' ')}; status=$?; rm -f /usr/sbin/policy-rc.d; exit $status`])) === 0;
  if (!ok || !nginxInstalled()) throw new StartupError(`could not install nginx: run \`${command}\` yourself, ${NODE_PLANE}`);
  log('launcher', `installed ${PACKAGES.join(', ')}`);
}
