import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What nginx's config needs to send its 5xx answers here (nginx-config.ts `statusFeed`). */
export interface StatusFeedAddress {
  port: number;
  /** Random, in the config only (0600, the edge's): a line without it is not nginx's and is ignored. */
  token: string;
}

/** nginx's upstream name for an application (`app_<id without dashes>`, `_b` for its second slot) → the application's id. */
export function applicationOfUpstream(proxyHost: string): string | undefined {
  const match = /^app_([0-9a-f]{32})(?:_b)?$/.exec(proxyHost);
  if (!match) return undefined;
  const h = match[1]!;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * nginx's 5xx answers for the first-minute watch: nginx's own access log, kept off except for
 * 5xx (`if=`), sent as syslog datagrams to this loopback UDP socket (nginx never blocks on it,
 * and healthy traffic sends nothing). Each line is `<token> <upstream> <status> <method> <path>`.
 * The port and token are kept in `<stateDir>/status-feed.json`, so a restarted edge renders the
 * same config (no reload, which would close clients' idle connections).
 */
export class NginxStatusFeed {
  private socket?: Socket;

  private constructor(
    readonly address: StatusFeedAddress,
    private readonly onAnswer: (applicationId: string, status: number, method: string, path: string) => void,
  ) {}

  static async open(stateDir: string, onAnswer: (applicationId: string, status: number, method: string, path: string) => void): Promise<NginxStatusFeed> {
    const file = join(stateDir, 'status-feed.json');
    const saved = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as Partial<StatusFeedAddress>,
      () => ({}) as Partial<StatusFeedAddress>,
    );
    const token = typeof saved.token === 'string' && /^[0-9a-f]{32}$/.test(saved.token) ? saved.token : randomBytes(16).toString('hex');
    await mkdir(stateDir, { recursive: true, mode: 0o755 });
    const socket = await bind(Number.isInteger(saved.port) ? saved.port! : 0).catch(() => bind(0));
    const port = socket.address().port;
    await writeFile(file, JSON.stringify({ port, token }), { mode: 0o600 });
    const feed = new NginxStatusFeed({ port, token }, onAnswer);
    feed.socket = socket;
    socket.on('message', (message) => feed.onMessage(message.toString('utf8')));
    return feed;
  }

  private onMessage(datagram: string): void {
    // `<190>Nov 27 20:00:00 slipway: <token> app_… 502 GET /path`
    const at = datagram.indexOf(`: ${this.address.token} `);
    if (at < 0) return;
    const [upstream, status, method, ...path] = datagram
      .slice(at + this.address.token.length + 3)
      .trimEnd()
      .split(' ');
    const applicationId = applicationOfUpstream(upstream ?? '');
    const code = Number(status);
    if (applicationId && Number.isInteger(code)) this.onAnswer(applicationId, code, method ?? '', path.join(' '));
  }

  close(): void {
    this.socket?.close();
  }
}

function bind(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}
