import { spawn } from 'node:child_process';

/**
 * Listening sockets a supervisor holds and hands to the processes it starts, so that a process
 * killed and started again (or two processes side by side) never leaves the port closed: the
 * socket — and the connections waiting in its backlog — belong to the supervisor, not to the
 * process that accepts them. systemd's socket activation, nginx's binary upgrade (`NGINX=fd;`) and
 * Envoy's hot restart work the same way.
 *
 * The environment names the inherited descriptors by role: `SLIPWAY_LISTEN_FDS=http=3,tls=4`.
 */
export const LISTEN_FDS_ENV = 'SLIPWAY_LISTEN_FDS';

/** A listening TCP socket held by this process, which never accepts on it itself. */
export interface HeldSocket {
  /** The descriptor, to pass in a child's `stdio` array (it must stay open here meanwhile). */
  readonly fd: number;
  readonly host: string;
  readonly port: number;
  close(): void;
}

interface RawHandle {
  fd: number;
  close(callback?: () => void): void;
}

/**
 * Node cannot open a listening socket without accepting on it, so a short-lived helper process
 * listens (backlog 511) and sends the bare socket here over IPC (SCM_RIGHTS), then exits: this
 * process then holds the socket without watching it, and its children accept. The helper lives
 * for a few milliseconds at start-up; a connection it accepted meanwhile would be reset, so hold
 * the sockets before anything is announced.
 */
export function holdListeningSocket(port: number, host: string): Promise<HeldSocket> {
  const script = `
    const net = require('node:net');
    const server = net.createServer();
    server.on('error', (error) => process.send({ error: error.code || error.message }, () => process.exit(0)));
    server.listen({ port: ${JSON.stringify(port)}, host: ${JSON.stringify(host)}, backlog: 511 }, () => {
      process.send({ port: server.address().port }, server._handle, () => process.exit(0));
    });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let settled = false;
    child.once('message', (message: { port?: number; error?: string }, handle?: RawHandle) => {
      settled = true;
      if (message.error || !handle || typeof handle.fd !== 'number' || handle.fd < 0) {
        handle?.close();
        reject(
          new Error(
            message.error === 'EADDRINUSE'
              ? `port ${port} on ${host} is already in use`
              : `could not listen on ${host}:${port}: ${message.error ?? 'no socket came back'}`,
          ),
        );
        return;
      }
      resolve({ fd: handle.fd, host, port: message.port!, close: () => handle.close() });
    });
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`could not listen on ${host}:${port}: the helper exited (${code}) ${stderr.trim().slice(-300)}`));
    });
  });
}

/** `http=3,tls=4` for the sockets in the order they follow stdin, stdout and stderr (3, 4, …). */
export function listenFdsValue(names: string[]): string {
  return names.map((name, i) => `${name}=${i + 3}`).join(',');
}

/** The descriptors a supervisor handed this process, by role (empty when it was started without). */
export function inheritedListenFds(env: NodeJS.ProcessEnv = process.env): Map<string, number> {
  const out = new Map<string, number>();
  for (const pair of (env[LISTEN_FDS_ENV] ?? '').split(',')) {
    const match = /^([a-z0-9-]+)=(\d+)$/.exec(pair.trim());
    if (match) out.set(match[1]!, Number(match[2]));
  }
  return out;
}
