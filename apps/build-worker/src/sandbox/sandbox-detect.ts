import { execFile } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { SandboxMode } from './sandbox.js';

const run = promisify(execFile);

async function userIds(user: string): Promise<{ uid: number; gid: number } | null> {
  try {
    const uid = Number((await run('id', ['-u', user])).stdout.trim());
    const gid = Number((await run('id', ['-g', user])).stdout.trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/**
 * Decides how builds run. `auto`: bubblewrap as the unprivileged build user when both work here
 * (the user is created when the worker runs as root and it is missing); otherwise no sandbox,
 * with the reason (it becomes the `unsandboxed_build` hazard).
 */
export async function detectSandbox(setting: 'auto' | 'off', buildUser: string, workspacesDir: string): Promise<SandboxMode> {
  if (setting === 'off') return { kind: 'none', reason: 'sandboxing is turned off (BUILD_SANDBOX=off)' };
  try {
    await run('bwrap', ['--version']);
  } catch {
    return { kind: 'none', reason: 'bubblewrap (bwrap) is not installed' };
  }
  let ids: { uid: number; gid: number } | null;
  if (process.getuid?.() === 0) {
    ids = await userIds(buildUser);
    if (!ids) {
      await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', buildUser]).catch(() => undefined);
      ids = await userIds(buildUser);
    }
    if (!ids) return { kind: 'none', reason: `the build user ${buildUser} does not exist and could not be created` };
  } else {
    // Not root: the worker's own user is already unprivileged.
    ids = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  }
  try {
    await run('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '/usr/bin/true'], { uid: ids.uid, gid: ids.gid });
  } catch (error) {
    return { kind: 'none', reason: `bwrap cannot create a sandbox here: ${((error as Error).message.split('\n')[1] ?? (error as Error).message).slice(0, 200)}` };
  }
  await mkdir(workspacesDir, { recursive: true, mode: 0o711 });
  await chmod(workspacesDir, 0o711);
  try {
    // The build user must reach the workspaces (every parent directory traversable).
    await run('bwrap', ['--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--bind', workspacesDir, '/w', '/usr/bin/true'], { uid: ids.uid, gid: ids.gid });
  } catch {
    return { kind: 'none', reason: `the build user cannot reach ${workspacesDir}; make its parent directories traversable (chmod o+x)` };
  }
  return { kind: 'bwrap', ...ids };
}
