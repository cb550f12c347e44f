import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

/** Files nginx and the edge share in the plane's state directory. */
export const nginxFiles = (stateDir: string) => ({
  conf: join(stateDir, 'nginx.conf'),
  candidate: join(stateDir, 'nginx.conf.next'),
  pid: join(stateDir, 'nginx.pid'),
});

/** One clear line when nginx is not installed (EDGE_DATA_PLANE=nginx needs it). */
export function nginxMissing(bin: string): string | null {
  const found = spawnSync(bin, ['-v'], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return null;
  return `EDGE_DATA_PLANE=nginx needs nginx (${bin}), which is not installed: run \`apt-get install -y nginx-light libnginx-mod-http-brotli-static\`, or set EDGE_DATA_PLANE=node to serve with the Node edge alone`;
}

/** The Debian module's path when installed, else null (no brotli_static; gzip_static still works). */
export async function brotliModule(): Promise<string | null> {
  const path = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';
  return readFile(path).then(
    () => path,
    () => null,
  );
}

async function processTitle(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
}

/**
 * Whether `pid` is the master of the nginx started on this state directory's config (its title
 * names `-c <stateDir>/nginx.conf`): another nginx on the machine, or a pid the kernel gave to
 * something else since, never is.
 */
export async function isMasterOf(pid: number, stateDir: string): Promise<boolean> {
  const title = await processTitle(pid);
  return title.startsWith('nginx: master process') && title.includes(` -c ${nginxFiles(stateDir).conf}`) && alive(pid);
}

/** The running master named by the pid file, if it is still the nginx master of this state directory. */
export async function runningMaster(stateDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(nginxFiles(stateDir).pid, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return (await isMasterOf(pid, stateDir)) ? pid : undefined;
}

/** `/proc/<pid>/stat`: state letter, parent and process group; undefined when the process is gone. */
function procStat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid), pgrp: Number(pgrp) };
}

export interface NginxProcessInfo {
  pid: number;
  ppid: number;
  /** The process group: a master started detached leads its own, and its workers stay in it. */
  pgrp: number;
  title: string;
}

/** Every live nginx process on the machine (title `nginx: …`). */
export async function nginxProcesses(): Promise<NginxProcessInfo[]> {
  const out: NginxProcessInfo[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const title = await processTitle(pid);
    if (!title.startsWith('nginx: ')) continue;
    const stat = procStat(pid);
    if (stat && stat.state !== 'Z' && stat.state !== 'X') out.push({ pid, ppid: stat.ppid, pgrp: stat.pgrp, title });
  }
  return out;
}

/** The process group of a live process (undefined when it is gone). */
export function processGroupOf(pid: number): number | undefined {
  return procStat(pid)?.pgrp;
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

/**
 * A process that exists and is not a zombie (a dead master whose parent has not reaped it yet —
 * an adopted one's parent is whatever the old supervisor's death reparented it to — is gone).
 */
export function alive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `nginx -t` of a candidate file: null when valid, else nginx's own words. */
export function validateConfig(bin: string, path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(bin, ['-t', '-q', '-c', path, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => resolve(error.message));
    child.on('close', (code) =>
      resolve(
        code === 0
          ? null
          : stderr
              .trim()
              .split('\n')
              .filter((l) => !/\[warn\]/.test(l))
              .join('; ') || `nginx -t exited with ${code}`,
      ),
    );
  });
}

export interface SpawnOptions {
  /**
   * Listening sockets nginx takes over instead of binding (nginx's binary-upgrade hand-over: they
   * become its descriptors 3, 4, … and `NGINX=3;4;` names them); each must match a `listen`
   * directive's address exactly.
   */
  listenFds?: number[];
  /**
   * In a process group (and session) of its own, so that killing the caller's group leaves it
   * serving; its workers stay in its group, which is how they are found once it is gone.
   */
  detached?: boolean;
}

/**
 * Starts nginx in the foreground (`daemon off`) on the config file; resolves with its pid once the
 * master wrote its pid file. Its output lines go to the log (while this process reads them).
 */
export async function spawnNginx(bin: string, stateDir: string, logger: Logger, options: SpawnOptions = {}): Promise<{ child: ChildProcess; master: number }> {
  const fds = options.listenFds ?? [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['NGINX'];
  if (fds.length) env['NGINX'] = fds.map((_, i) => `${i + 3};`).join('');
  const child = spawn(bin, ['-c', nginxFiles(stateDir).conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'pipe', 'pipe', ...fds],
    env,
    detached: options.detached ?? false,
  });
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

/**
 * Retires what is left of an nginx instance: `pids` get SIGQUIT (nginx's graceful shutdown: a
 * worker closes its listening sockets at once, finishes the requests it is serving and exits),
 * and whatever still runs after `graceMs` gets SIGKILL. Resolves with the pids that had to be killed.
 */
export async function retireNginx(pids: number[], graceMs: number): Promise<number[]> {
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      /* gone */
    }
  };
  for (const pid of pids) signal(pid, 'SIGQUIT');
  if (await waitExited(pids, graceMs)) return [];
  const left = pids.filter(alive);
  for (const pid of left) signal(pid, 'SIGKILL');
  await waitExited(left, 2_000);
  return left;
}
