import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { log } from './log.js';

/** The nginx data plane's state directory (the runtime supervisor's keeper writes nginx.conf and nginx.pid there). */
export function nginxStateDir(home: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(env['RUNTIME_DIR'] || join(home, 'runtime'), 'nginx');
}

async function cmdline(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
}

function processGroup(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * nginx is detached from the runtime supervisor (it outlives a supervisor crash and is adopted by
 * the next one). When the supervisor is gone for good — the launcher stops after a crash loop, or
 * a whole platform was SIGKILLed — the master named by this home's pid file (checked to be an nginx
 * master on this state directory's config, never someone else's nginx) is stopped with its workers:
 * SIGQUIT to its process group (requests in flight finish), SIGKILL after `graceMs`. Before the
 * launcher holds the edge's port, so nothing of an earlier run keeps it; and after everything stopped.
 */
export async function stopLeftoverNginx(home: string, graceMs = 5_000): Promise<void> {
  const state = nginxStateDir(home);
  const pid = Number((await readFile(join(state, 'nginx.pid'), 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  const title = await cmdline(pid);
  if (!title.startsWith('nginx: master process') || !title.includes(join(state, 'nginx.conf'))) return;
  const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => '');
  const group = stat ? processGroup(stat) : pid;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(group === pid ? -group : pid, name);
    } catch {
      /* gone */
    }
  };
  log('launcher', `nginx master ${pid} of ${state} is still running with no runtime supervisor: stopping it`);
  signal('SIGQUIT');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) signal('SIGKILL');
  // Its workers are in its group: the group signal reached them; a last SIGKILL for stragglers.
  if (group === pid) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      /* all gone */
    }
  }
}
