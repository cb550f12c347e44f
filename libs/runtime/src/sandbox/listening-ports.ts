import { opendir, readFile, readlink } from 'node:fs/promises';
import type { AppCgroup } from './cgroups.js';
import { descendants } from './process-tree.js';

/** Descriptors read per process at most: a process holding more only hides its own extra sockets. */
const MAX_FDS = 4096;
/** The kernel's TCP_LISTEN state in /proc/net/tcp. */
const LISTEN = '0A';

/** The socket inodes `pid` holds (`/proc/<pid>/fd/* -> socket:[inode]`), up to MAX_FDS descriptors. */
async function socketInodes(pid: number, into: Set<string>): Promise<void> {
  let dir;
  try {
    dir = await opendir(`/proc/${pid}/fd`);
  } catch {
    return; // gone meanwhile
  }
  let seen = 0;
  try {
    for await (const entry of dir) {
      if (++seen > MAX_FDS) break;
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
    const text = await readFile(`/proc/${pid}/net/${file}`, 'latin1').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
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
  for (const pid of new Set(pids)) {
    const network = await readlink(`/proc/${pid}/ns/net`).catch(() => null);
    if (network === null || network === skipNetwork) continue;
    let entry = byNetwork.get(network);
    if (!entry) byNetwork.set(network, (entry = { pid, inodes: new Set() }));
    await socketInodes(pid, entry.inodes);
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
