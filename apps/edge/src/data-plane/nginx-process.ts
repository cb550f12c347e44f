import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

/** Files nginx and the edge share in the plane's state directory. */
export const nginxFiles = (stateDir: string) => ({ conf: join(stateDir, 'nginx.conf'), candidate: join(stateDir, 'nginx.conf.next'), pid: join(stateDir, 'nginx.pid') });

/** One clear line when nginx is not installed (EDGE_DATA_PLANE=nginx needs it). */
export function nginxMissing(bin: string): string | null {
  const found = spawnSync(bin, ['-v'], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return null;
  return `EDGE_DATA_PLANE=nginx needs nginx (${bin}), which is not installed: run \`apt-get install -y nginx-light libnginx-mod-http-brotli-static\`, or set EDGE_DATA_PLANE=node to serve with the Node edge alone`;
}

/** The Debian module's path when installed, else null (no brotli_static; gzip_static still works). */
export async function brotliModule(): Promise<string | null> {
  const path = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';
  return readFile(path).then(() => path, () => null);
}

async function processTitle(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
}

/** The running master named by the pid file, if it is still an nginx master. */
export async function runningMaster(stateDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(nginxFiles(stateDir).pid, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return (await processTitle(pid)).startsWith('nginx: master process') ? pid : undefined;
}

/** The master's worker processes (read from /proc: `ppid` = master, title `nginx: worker process…`). */
export async function workersOf(master: number): Promise<{ pid: number; shuttingDown: boolean }[]> {
  const out: { pid: number; shuttingDown: boolean }[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'latin1').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== master) continue;
    const title = await processTitle(Number(entry));
    if (title.startsWith('nginx: worker process')) out.push({ pid: Number(entry), shuttingDown: title.includes('shutting down') });
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `nginx -t` of a candidate file: null when valid, else nginx's own words. */
export function validateConfig(bin: string, path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(bin, ['-t', '-q', '-c', path, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => resolve(error.message));
    child.on('close', (code) => resolve(code === 0 ? null : stderr.trim().split('\n').filter((l) => !/\[warn\]/.test(l)).join('; ') || `nginx -t exited with ${code}`));
  });
}

/**
 * Starts nginx in the foreground (`daemon off`) on the config file, as a child in the caller's
 * process group (it goes when the caller's group is killed); resolves with its pid once the
 * master wrote its pid file. Its output lines go to the log.
 */
export async function spawnNginx(bin: string, stateDir: string, logger: Logger): Promise<{ child: ChildProcess; master: number }> {
  const child = spawn(bin, ['-c', nginxFiles(stateDir).conf, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const onLine = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-2000);
    for (const line of text.split('\n')) if (line.trim() && !/setrlimit|\[notice\]/.test(line)) logger.warn(`nginx: ${line.trim()}`);
  };
  child.stdout!.on('data', onLine);
  child.stderr!.on('data', onLine);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nginx exited at start: ${tail.trim().slice(-500)}`);
    const master = await runningMaster(stateDir);
    if (master !== undefined && master === child.pid) return { child, master };
    await sleep(20);
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not start within 10 s: ${tail.trim().slice(-500)}`);
}

/**
 * SIGHUP: nginx re-reads its config, starts new workers and asks the old ones to finish what they
 * are serving and exit. Resolves once a worker of the new generation runs and every old one is
 * gone or shutting down (from then on new connections get the new config), with the old
 * generation's pids; rejects when none appears
 * within `timeoutMs` (nginx kept its old config, e.g. it could not apply the new one).
 */
export async function reloadNginx(master: number, timeoutMs: number): Promise<number[]> {
  const old = (await workersOf(master)).map((w) => w.pid);
  process.kill(master, 'SIGHUP');
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; Date.now() < deadline; wait = Math.min(wait * 2, 50)) {
    const now = await workersOf(master);
    // New workers run, and no old one still accepts: each is gone or titled "shutting down",
    // which nginx sets just before it closes its listening sockets (a tiny window remains).
    const started = now.some((w) => !old.includes(w.pid) && !w.shuttingDown);
    if (started && now.every((w) => !old.includes(w.pid) || w.shuttingDown)) return old;
    if (!alive(master)) throw new Error('nginx exited during the reload');
    await sleep(wait);
  }
  throw new Error(`nginx started no new workers within ${timeoutMs} ms of SIGHUP`);
}

/** Waits until every one of `pids` has exited (old workers finished their requests), at most `timeoutMs`; true when all did. */
export async function waitExited(pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    if (pids.every((p) => !alive(p))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(wait);
  }
}

/** Graceful stop (SIGQUIT: requests in flight finish), SIGTERM after `graceMs`. */
export async function stopNginx(master: number, graceMs: number): Promise<void> {
  try {
    process.kill(master, 'SIGQUIT');
  } catch {
    return;
  }
  if (await waitExited([master], graceMs)) return;
  try {
    process.kill(master, 'SIGTERM');
  } catch {
    /* gone */
  }
  await waitExited([master], 2_000);
}
