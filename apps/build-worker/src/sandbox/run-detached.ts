import { spawn } from 'node:child_process';

/** Signals only ever sent to the worker's own process group, never to a helper on purpose. */
const STRAY = new Set<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP']);

function once(
  file: string,
  args: string[],
  ids?: { uid: number; gid: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'], ...ids });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => resolve({ code: null, signal: null, stderr: error.message }));
    child.on('close', (code, signal) => resolve({ code, signal, stderr: stderr.trim() }));
  });
}

/**
 * Runs a helper command (chown, a check) in its own process group, so a SIGTERM sent to the
 * worker's group (`pnpm start`'s Ctrl-C, a service stop) does not kill it halfway through a step
 * the worker means to finish. A signal that reaches the group while the helper is being spawned
 * (before it leaves the group) still kills it: then it runs once more, as it is idempotent.
 */
export async function runDetached(file: string, args: string[], ids?: { uid: number; gid: number }): Promise<{ code: number | null; stderr: string }> {
  let result = await once(file, args, ids);
  if (result.signal && STRAY.has(result.signal)) result = await once(file, args, ids);
  return { code: result.code, stderr: result.stderr || (result.signal ? `killed by ${result.signal}` : '') };
}

/** `chown -R uid:gid path` in its own process group; throws with chown's message when it fails. */
export async function chownTree(path: string, ids: { uid: number; gid: number }): Promise<void> {
  const { code, stderr } = await runDetached('chown', ['-R', `${ids.uid}:${ids.gid}`, path]);
  if (code !== 0) throw new Error(`chown -R ${ids.uid}:${ids.gid} ${path} failed: ${stderr || `exit ${code}`}`);
}
