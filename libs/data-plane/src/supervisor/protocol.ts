import type { Socket } from 'node:net';
import type { PortFound, ReleaseToRun, RuntimeReport } from '@slipway/runtime';

/**
 * The edge ↔ runtime supervisor protocol: one JSON object per line over a Unix socket that only
 * the platform's user can open (its directory is 0700). Requests carry an `id`; answers echo it.
 * `start` carries the release's environment (its secrets): it is never logged on either side.
 */
export type SupervisorRequest =
  | { id: number; op: 'ping' }
  | { id: number; op: 'start'; release: ReleaseToRun }
  | { id: number; op: 'stop'; releaseId: string; graceMs?: number }
  | { id: number; op: 'list' }
  /** The release's crashes, restarts and stderr error lines so far (the edge's first-minute watch). */
  | { id: number; op: 'report'; releaseId: string };

export interface RunningInfo {
  releaseId: string;
  applicationId: string;
  /** Where the edge reaches it: the sandbox's address on the kernel path, else 127.0.0.1 (absent: 127.0.0.1). */
  host?: string;
  port: number;
  pid?: number;
  /** The app ignores PORT and listens here instead (RunningRelease.portFound). */
  portFound?: PortFound;
}

export type SupervisorError =
  { kind: 'unhealthy'; message: string; logTail: string } | { kind: 'sandbox'; message: string } | { kind: 'other'; message: string };

export type SupervisorAnswer =
  { id: number; ok: true; result?: RunningInfo | RunningInfo[] | { pid: number } | RuntimeReport | null } | { id: number; ok: false; error: SupervisorError };

/** Calls `onMessage` with each complete JSON line the socket receives. */
export function readLines(socket: Socket, onMessage: (message: unknown) => void): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!line.trim()) continue;
      try {
        onMessage(JSON.parse(line));
      } catch {
        socket.destroy();
        return;
      }
    }
    // A peer that never ends a line is not a platform process: 64 MiB is far above any release's environment.
    if (buffer.length > 64 * 1024 * 1024) socket.destroy();
  });
}

export function send(socket: Socket, message: SupervisorRequest | SupervisorAnswer): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}
