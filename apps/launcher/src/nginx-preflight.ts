import { spawnSync } from 'node:child_process';
import { aptCommand, aptInstall, onPath } from './apt.js';
import { StartupError } from './errors.js';
import { log } from './log.js';

const PACKAGES = ['nginx-light', 'libnginx-mod-http-brotli-static'];
const NODE_PLANE = 'or set EDGE_DATA_PLANE=node to serve apps with the Node edge alone';

function nginxInstalled(): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0;
}

/**
 * EDGE_DATA_PLANE=nginx (the default): nginx (Debian's nginx-light, with the brotli_static
 * module) serves the apps. As root on Debian/Ubuntu it is installed from apt when missing (as the
 * build sandbox is); otherwise `pnpm start` stops with one line naming the command. The Debian
 * package's own nginx service is not used (Slipway runs its own master on EDGE_PORT).
 */
export async function nginxPreflight(): Promise<void> {
  if (nginxInstalled()) return;
  const command = aptCommand(PACKAGES);
  if (process.getuid?.() !== 0 || !onPath('apt-get')) {
    throw new StartupError(`the nginx data plane needs nginx, which is not installed: run \`sudo ${command}\`, ${NODE_PLANE}`);
  }
  log('launcher', `installing the nginx data plane: apt-get update && ${command}`);
  // The package must not start Debian's own nginx on port 80.
  const ok = await aptInstall(PACKAGES, { noServiceStart: true });
  if (!ok || !nginxInstalled()) throw new StartupError(`could not install nginx: run \`${command}\` yourself, ${NODE_PLANE}`);
  log('launcher', `installed ${PACKAGES.join(', ')}`);
}
