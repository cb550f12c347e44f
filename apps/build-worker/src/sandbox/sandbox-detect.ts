import { execFile } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { SandboxUnavailableError, probeSandbox } from '@slipway/sandbox';
import { runDetached } from './run-detached.js';

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

/** The unprivileged user builds run as: `buildUser` (created when we are root), or our own user otherwise. */
async function buildIds(buildUser: string): Promise<{ uid: number; gid: number }> {
  if (process.getuid?.() !== 0) return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  let ids = await userIds(buildUser);
  if (!ids) {
    await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', buildUser]).catch(() => undefined);
    ids = await userIds(buildUser);
  }
  if (!ids)
    throw new SandboxUnavailableError(
      `the build user ${buildUser} does not exist and could not be created: create it (useradd --system ${buildUser}) or set BUILD_USER`,
    );
  if (ids.uid === 0) throw new SandboxUnavailableError(`the build user ${buildUser} is uid 0; set BUILD_USER to an unprivileged user`);
  return ids;
}

async function canTraverse(dir: string, ids: { uid: number; gid: number }): Promise<boolean> {
  return (await runDetached('/usr/bin/test', ['-x', dir], ids)).code === 0;
}

/**
 * Makes sure builds can be sandboxed here: the unprivileged build user, a probe run exactly as
 * builds run (pasta + bubblewrap as that user), and the workspaces reachable by it. Throws
 * SandboxUnavailableError saying what is missing and how to fix it; nothing of a project has run.
 */
export async function detectSandbox(buildUser: string, workspacesDir: string, path?: string): Promise<{ kind: 'bwrap'; uid: number; gid: number }> {
  const ids = await buildIds(buildUser);
  const reason = await probeSandbox(ids, { kind: 'outbound' }, 10_000, path);
  if (reason) throw new SandboxUnavailableError(reason);
  await mkdir(workspacesDir, { recursive: true, mode: 0o711 });
  await chmod(workspacesDir, 0o711);
  if (!(await canTraverse(workspacesDir, ids))) {
    throw new SandboxUnavailableError(
      `the build user cannot reach ${workspacesDir}: make every parent directory traversable (chmod o+x), or set BUILD_DIR elsewhere`,
    );
  }
  return { kind: 'bwrap', ...ids };
}
