import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization']);

export interface Upstream {
  host: string;
  port: number;
  /** Called when a proxied exchange starts and ends (the drain waits for zero). */
  enter(): void;
  leave(): void;
}

function forwardedHeaders(req: IncomingMessage, scheme: string): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const connectionTokens = new Set(String(req.headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim()));
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_BY_HOP.has(name) && !connectionTokens.has(name)) headers[name] = value;
  }
  const client = req.socket.remoteAddress ?? '';
  headers['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${client}` : client;
  headers['x-forwarded-proto'] = scheme;
  headers['x-forwarded-host'] = req.headers.host ?? '';
  return headers;
}

function responseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/**
 * A plain streaming reverse proxy to a local app: method, path, headers and body pass through,
 * responses stream back as they come, websockets (Upgrade) are piped both ways.
 */
export class ReverseProxy {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64, keepAliveMsecs: 10_000 });

  constructor(private readonly scheme: string) {}

  forward(req: IncomingMessage, res: ServerResponse, upstream: Upstream): void {
    upstream.enter();
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        upstream.leave();
      }
    };
    res.on('close', finish);
    const outgoing = request(
      { host: upstream.host, port: upstream.port, method: req.method, path: req.url, headers: forwardedHeaders(req, this.scheme), agent: this.agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.headers));
        // Streaming: each chunk is written as it arrives (pipe), nothing is buffered.
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    outgoing.on('error', () => {
      if (!res.headersSent) {
        const body = 'Bad Gateway: the application is not answering\n';
        res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
      } else res.destroy();
      finish();
    });
    outgoing.on('socket', (socket) => socket.setNoDelay(true));
    req.on('aborted', () => outgoing.destroy());
    // Most requests have no body: end at once instead of waiting for the request stream.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) outgoing.end();
    else req.pipe(outgoing);
  }

  upgrade(req: IncomingMessage, socket: Socket, head: Buffer, upstream: Upstream): void {
    upstream.enter();
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        upstream.leave();
      }
    };
    const target = connect(upstream.port, upstream.host, () => {
      const headers = forwardedHeaders(req, this.scheme);
      headers['connection'] = 'Upgrade';
      headers['upgrade'] = req.headers.upgrade;
      let head0 = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (const [name, value] of Object.entries(headers)) {
        for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) head0 += `${name}: ${v}\r\n`;
      }
      target.write(`${head0}\r\n`);
      if (head.length) target.write(head);
      target.pipe(socket);
      socket.pipe(target);
    });
    const close = () => {
      target.destroy();
      socket.destroy();
      finish();
    };
    target.on('error', () => {
      if (socket.writable) socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      close();
    });
    target.on('close', close);
    socket.on('error', close);
    socket.on('close', close);
  }
}
