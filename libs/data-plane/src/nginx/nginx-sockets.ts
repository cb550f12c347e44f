import { spawn } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { isIP } from 'node:net';
import { holdListeningSocket, inheritedListenFds, type HeldSocket } from '@slipway/service-kit';

/**
 * The listening sockets nginx serves on, owned by the runtime supervisor's keeper rather than by
 * nginx: each nginx master gets them as inherited descriptors (`NGINX=3;4;`, nginx's own binary
 * upgrade mechanism), so a master that dies leaves the sockets open — connections wait in their
 * backlog — and the next master serves them at once, even while an orphaned worker of the old
 * one still accepts on them. They come from the launcher (`SLIPWAY_LISTEN_FDS=edge=3,edge-https=4`)
 * and outlive the runtime supervisor too; without them the keeper holds its own.
 */

/** The roles the launcher names the edge's sockets by. */
export type ListenRole = 'edge' | 'edge-https';

export interface ListenAddress {
  role: ListenRole;
  host: string;
  port: number;
}

export interface ListenSocket extends ListenAddress {
  /** The descriptor in this process (passed to nginx in `stdio`, after 0–2). */
  fd: number;
  /** The socket's inode: how nginx's processes are recognized as holding it (/proc/<pid>/fd). */
  inode: number;
  /** `inherited`: from the launcher (never closed here); `held`: opened by this process. */
  origin: 'inherited' | 'held';
  held?: HeldSocket;
}

/** The inode of a socket descriptor of a process (`socket:[N]`), or undefined. */
export async function socketInode(fd: number, pid: number | 'self' = 'self'): Promise<number | undefined> {
  const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
  const match = /^socket:\[(\d+)\]$/.exec(link);
  return match ? Number(match[1]) : undefined;
}

/** Every socket inode a process holds. */
export async function socketInodesOf(pid: number): Promise<Set<number>> {
  const out = new Set<number>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const inode = await socketInode(Number(fd), pid);
    if (inode !== undefined) out.add(inode);
  }
  return out;
}

/** `0100007F` (/proc/net/tcp, 32-bit words in host order) → `127.0.0.1`; 32 hex digits → an IPv6 address. */
function procAddress(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return canonical(groups.join(':'));
}

/** One spelling per address (`::`, `0:0:…:0` alike) for comparisons. */
function canonical(host: string): string {
  return isIP(host) === 6 ? new URL(`http://[${host}]`).hostname.slice(1, -1) : host;
}

/** The machine's listening TCP sockets (this network namespace), by inode. */
export async function listeningSockets(): Promise<Map<number, { host: string; port: number }>> {
  const out = new Map<number, { host: string; port: number }>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(file, 'latin1').catch(() => '')).split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address rem_address st … inode; st 0A = LISTEN.
      if (cols.length < 10 || cols[3] !== '0A') continue;
      const [addr, port] = cols[1]!.split(':');
      out.set(Number(cols[9]), { host: procAddress(addr!), port: parseInt(port!, 16) });
    }
  }
  return out;
}

/** The inodes of the sockets listening on `port` (whatever process holds them). */
export async function listeningOn(port: number): Promise<number[]> {
  return [...(await listeningSockets())].filter(([, a]) => a.port === port).map(([inode]) => inode);
}

/**
 * nginx reuses an inherited socket only for a `listen` directive of exactly its address (else it
 * closes it and binds on its own, which fails with the socket still held here). A host name is
 * resolved by nginx and cannot be checked here: only the port is then.
 */
function matches(wanted: ListenAddress, actual: { host: string; port: number }): boolean {
  if (wanted.port !== actual.port) return false;
  return isIP(wanted.host) === 0 || canonical(wanted.host) === actual.host;
}

/**
 * The sockets for `wanted`: the launcher's (`SLIPWAY_LISTEN_FDS`, checked to listen on exactly the
 * address nginx's config names), else held by this process. `busy`: a role whose port another
 * process holds (e.g. the nginx an earlier runtime supervisor left running).
 */
export async function openListenSockets(wanted: ListenAddress[], env: NodeJS.ProcessEnv): Promise<{ sockets: ListenSocket[]; busy: ListenAddress[] }> {
  const inherited = inheritedListenFds(env);
  const listening = await listeningSockets();
  const sockets: ListenSocket[] = [];
  const busy: ListenAddress[] = [];
  for (const want of wanted) {
    const fd = inherited.get(want.role);
    if (fd !== undefined) {
      const inode = await socketInode(fd);
      const actual = inode === undefined ? undefined : listening.get(inode);
      if (inode === undefined || !actual)
        throw new Error(`SLIPWAY_LISTEN_FDS names fd ${fd} for ${want.role}, which is not a listening TCP socket of this process`);
      if (!matches(want, actual))
        throw new Error(
          `SLIPWAY_LISTEN_FDS: fd ${fd} (${want.role}) listens on ${actual.host}:${actual.port}, but nginx is configured to listen on ${want.host}:${want.port}: start both with the same HOST and port`,
        );
      sockets.push({ ...want, fd, inode, origin: 'inherited' });
      continue;
    }
    const socket = await holdSocket(want);
    if (socket) sockets.push(socket);
    else busy.push(want);
  }
  return { sockets, busy };
}

/** Holds a socket of this process for `want`; undefined when the port is in use. */
export async function holdSocket(want: ListenAddress): Promise<ListenSocket | undefined> {
  let held: HeldSocket;
  try {
    held = await holdListeningSocket(want.port, want.host);
  } catch (error) {
    if (/already in use/.test((error as Error).message)) return undefined;
    throw error;
  }
  const inode = await socketInode(held.fd);
  if (inode === undefined) throw new Error(`could not find the socket held for ${want.host}:${want.port}`);
  return { ...want, fd: held.fd, inode, origin: 'held', held };
}

interface RawHandle {
  fd: number;
  close(callback?: () => void): void;
}

/**
 * Holds a socket for `want` the moment its port is free: a helper (as in holdListeningSocket)
 * retries listen() every 2 ms while the port is busy, for at most `timeoutMs`, and `onBusy` is
 * called once it is retrying — the caller frees the port then (e.g. SIGQUIT to old nginx workers,
 * which close their listening sockets at once), so at most a few milliseconds pass with nobody
 * listening. Rejects when the port did not come free in time.
 */
export function holdWhenFree(want: ListenAddress, timeoutMs: number, onBusy: () => void): Promise<ListenSocket> {
  const script = `
    const net = require('node:net');
    const deadline = Date.now() + ${Number(timeoutMs)};
    let told = false;
    const server = net.createServer();
    const attempt = () => server.listen({ port: ${Number(want.port)}, host: ${JSON.stringify(want.host)}, backlog: 511 });
    server.on('error', (error) => {
      if (error.code === 'EADDRINUSE' && Date.now() < deadline) {
        if (!told) process.send({ busy: true });
        told = true;
        return setTimeout(attempt, 2);
      }
      process.send({ error: error.code || error.message }, () => process.exit(0));
    });
    server.on('listening', () => process.send({ port: server.address().port }, server._handle, () => process.exit(0)));
    attempt();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let settled = false;
    child.on('message', (message: { busy?: boolean; port?: number; error?: string }, handle?: RawHandle) => {
      if (message.busy) return onBusy();
      settled = true;
      if (message.error || !handle || typeof handle.fd !== 'number' || handle.fd < 0) {
        handle?.close();
        reject(
          new Error(
            message.error === 'EADDRINUSE'
              ? `${want.host}:${want.port} is still in use after ${timeoutMs} ms`
              : `could not listen on ${want.host}:${want.port}: ${message.error ?? 'no socket came back'}`,
          ),
        );
        return;
      }
      void socketInode(handle.fd).then((inode) => {
        if (inode === undefined) return reject(new Error(`could not find the socket held for ${want.host}:${want.port}`));
        resolve({ ...want, fd: handle.fd, inode, origin: 'held', held: { fd: handle.fd, host: want.host, port: want.port, close: () => handle.close() } });
      });
    });
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`could not listen on ${want.host}:${want.port}: the helper exited (${code}) ${stderr.trim().slice(-300)}`));
    });
  });
}
