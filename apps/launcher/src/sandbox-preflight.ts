import { chmod, stat } from 'node:fs/promises';
import { probeSandbox } from '@slipway/sandbox';
import { aptCommand, aptInstall, onPath } from './apt.js';
import { StartupError } from './errors.js';
import { log } from './log.js';

/**
 * e2fsprogs: each build's fixed-size disk is an ext4 image (`mkfs.ext4`; the build worker's
 * BUILD_DISK_MB). nftables: the runtime sandbox's kernel network path (veth pairs; without `nft`
 * RUNTIME_NETWORK=auto falls back to pasta's forwarding, slower).
 */
const PACKAGES = ['bubblewrap', 'passt', 'e2fsprogs', 'nftables'];
const OFF = 'or set BUILD_SANDBOX=off to run builds unsandboxed (every deploy then carries the unsandboxed_build hazard)';

/** bubblewrap, passt and e2fsprogs from apt when we are root on Debian/Ubuntu; the exact command otherwise. */
async function ensurePackages(root: boolean): Promise<void> {
  const missing = [
    onPath('bwrap') ? null : 'bubblewrap',
    onPath('pasta') ? null : 'passt',
    root && !onPath('mkfs.ext4') ? 'e2fsprogs' : null,
    root && !onPath('nft') ? 'nftables' : null,
  ].filter((p): p is string => p !== null);
  if (missing.length === 0) return;
  const command = aptCommand(PACKAGES);
  if (!root || !onPath('apt-get')) {
    const how = onPath('apt-get') ? `run \`sudo ${command}\`` : `install ${missing.join(' and ')} with your package manager`;
    throw new StartupError(`the build sandbox needs ${missing.join(' and ')}, which are not installed: ${how}, ${OFF}`);
  }
  log('launcher', `installing the build sandbox (${missing.join(', ')}): apt-get update && ${command}`);
  const ok = await aptInstall(PACKAGES);
  if (!ok || !onPath('bwrap') || !onPath('pasta') || (missing.includes('e2fsprogs') && !onPath('mkfs.ext4')))
    throw new StartupError(`could not install ${missing.join(' and ')}: run \`${command}\` yourself, ${OFF}`);
  log('launcher', `installed ${missing.join(', ')}`);
}

/** pasta runs as an unprivileged user and opens /dev/net/tun; some machines ship it 0600. */
async function ensureTun(root: boolean): Promise<void> {
  const tun = await stat('/dev/net/tun').catch(() => null);
  if (!root || !tun?.isCharacterDevice() || (tun.mode & 0o666) === 0o666) return;
  await chmod('/dev/net/tun', 0o666);
  log('launcher', 'made /dev/net/tun usable by unprivileged users (chmod 0666), as pasta needs for the build sandbox');
}

/**
 * Before anything starts: makes sure builds can be sandboxed (the build worker fails every deploy
 * that runs code with sandbox_unavailable otherwise). As root on Debian/Ubuntu it installs
 * bubblewrap and passt and opens /dev/net/tun itself; what it cannot fix (user namespaces) stops
 * `pnpm start` with one line naming the command.
 */
export async function sandboxPreflight(setting: 'on' | 'off'): Promise<void> {
  if (setting === 'off') {
    log('launcher', 'BUILD_SANDBOX=off: builds run WITHOUT a sandbox; every deploy carries the unsandboxed_build hazard');
    return;
  }
  const root = process.getuid?.() === 0;
  await ensurePackages(root);
  await ensureTun(root);
  // As root the probe runs as nobody: the build worker's own user is as unprivileged.
  const ids = root ? { uid: 65534, gid: 65534 } : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const reason = await probeSandbox(ids, { kind: 'outbound' });
  if (reason) throw new StartupError(`the build sandbox cannot be made on this machine: ${reason}; ${OFF}`);
}
