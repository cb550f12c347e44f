import { open, opendir, readlink } from 'node:fs/promises';
import type { AppCgroup } from './cgroups.js';
import { descendants } from './process-tree.js';

/**
 * What one scan reads at most, whatever the app does (it runs on the runtime's own CPU, while an
 * app holding 256 processes of 4096 descriptors each would otherwise cost a million `readlink`s):
 * processes, descriptors in all, and bytes of each socket table (listening sockets come first in
 * it). An app past them is only harder to find.
 */
const MAX_PROCESSES = 256;
const MAX_FDS = 4096;
const MAX_TABLE_BYTES = 1 << 20;
/** The kernel's TCP_LISTEN state in /proc/net/tcp. */
const LISTEN = '0A';

/** The first `max` bytes of a /proc file ('' when it cannot be read). */
async function readStart(path: string, max: number): Promise<string> {
  const file = await open(path, 'r').catch(() => null);
  if (!file) return '';
  try {
    const buffer = Buffer.alloc(max);
    let length = 0;
    for (let read = -1; read !== 0 && length < max; length += read) read = (await file.read(buffer, length, max - length, null)).bytesRead;
    return buffer.subarray(0, length).toString('latin1');
  } catch {
    return '';
  } finally {
    await file.close();
  }
}

/** The socket inodes `pid` holds (`/proc/<pid>/fd/* -> socket:[inode]`), while `budget.fds` lasts. */
async function socketInodes(pid: number, into: Set<string>, budget: { fds: number }): Promise<void> {
  let dir;
  try {
    dir = await opendir(`/proc/${pid}/fd`);
  } catch {
    return; // gone meanwhile
  }
  try {
    for await (const entry of dir) {
      if (--budget.fds < 0) break;
      const target = await readlink(`/proc/${pid}/fd/${entry.name}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) into.add(inode);
    }
  } finally {
    await dir.close().catch(() => undefined);
  }
}

/** Local ports of the listening sockets in `pid`'s network namespace whose inode is in `inodes`. */
async function listenersOf(pid: number, inodes: Set<string>, into: Set<number>): Promise<void> {
  for (const file of ['tcp', 'tcp6']) {
    const text = await readStart(`/proc/${pid}/net/${file}`, MAX_TABLE_BYTES);
    // A line cut at the bound is left out.
    for (const line of text.split('\n').slice(1, -1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== LISTEN || !inodes.has(fields[9] ?? '')) continue;
      const port = parseInt(fields[1]?.split(':').pop() ?? '', 16);
      if (port > 0) into.add(port);
    }
  }
}

/**
 * The TCP ports `pids` listen on, as the kernel reports them: each process's sockets (by inode)
 * matched against the listening sockets of its network namespace. A port counts only when one of
 * these very processes holds the socket, so a listener of anyone else — pasta's own in the
 * sandbox's namespace (the platform ports it forwards), another app's, the host's — never does.
 * `skipNetwork`: a network namespace (`net:[…]`) whose processes are left out (the host's, where
 * pasta itself runs, for a sandboxed release).
 */
export async function listeningPorts(pids: number[], skipNetwork?: string): Promise<number[]> {
  const byNetwork = new Map<string, { pid: number; inodes: Set<string> }>();
  const budget = { fds: MAX_FDS };
  for (const pid of [...new Set(pids)].slice(0, MAX_PROCESSES)) {
    const network = await readlink(`/proc/${pid}/ns/net`).catch(() => null);
    if (network === null || network === skipNetwork) continue;
    let entry = byNetwork.get(network);
    if (!entry) byNetwork.set(network, (entry = { pid, inodes: new Set() }));
    await socketInodes(pid, entry.inodes, budget);
  }
  const ports = new Set<number>();
  for (const { pid, inodes } of byNetwork.values()) if (inodes.size > 0) await listenersOf(pid, inodes, ports);
  return [...ports].sort((a, b) => a - b);
}

/**
 * The TCP ports a release's own processes listen on: those of its cgroup, else of its process
 * tree under `rootPid`; sandboxed, only inside its network namespace (never pasta's listeners,
 * which run in the host's), unsandboxed on the host.
 */
export async function releaseListeningPorts(rootPid: number, cgroup: AppCgroup | null, sandboxed: boolean): Promise<number[]> {
  const pids = cgroup ? await cgroup.pids() : [rootPid, ...(await descendants(rootPid))];
  return listeningPorts(pids, sandboxed ? await readlink('/proc/self/ns/net') : undefined);
}
