import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

/** Hop-by-hop headers (RFC 9110 §7.6.1) plus `expect`: the edge already answered `100-continue`. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'expect']);
/** Headers that must reach the app once: Node keeps the first one too (`req.headers`), and routing used that one. */
const SINGLE = new Set(['host', 'content-length']);
/** Set by the nginx plane on what it hands to this edge: the client's address (nginx-config.ts). */
const CLIENT_HEADER = 'x-slipway-client';
const BAD_GATEWAY = 'Bad Gateway: the application is not answering\n';
const BAD_GATEWAY_HEAD = { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(BAD_GATEWAY)) };

export interface Upstream {
  host: string;
  port: number;
  /** Called when a proxied exchange starts and ends (the drain waits for zero). */
  enter(): void;
  leave(): void;
}

/** The header names listed in `Connection` (also hop-by-hop for this request); usually none. */
function connectionTokens(req: IncomingMessage): Set<string> | undefined {
  const connection = req.headers.connection;
  if (!connection || connection === 'keep-alive' || connection === 'close') return undefined;
  return new Set(
    connection
      .toLowerCase()
      .split(',')
      .map((t) => t.trim()),
  );
}

/**
 * The request headers for the app as a flat `[name, value, …]` list, built from `rawHeaders`
 * (no object per request, repeated headers stay separate): hop-by-hop headers and those named in
 * `Connection` dropped, `X-Forwarded-For` appended to, `X-Forwarded-Proto/Host` set.
 */
function forwardedHeaders(req: IncomingMessage, scheme: string, behindNginx: boolean): string[] {
  const raw = req.rawHeaders;
  const tokens = connectionTokens(req);
  const headers: string[] = [];
  let forwardedFor: string | undefined;
  let client = req.socket.remoteAddress ?? '';
  let seenHost = false;
  let seenLength = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || name === 'x-forwarded-proto' || name === 'x-forwarded-host' || tokens?.has(name)) continue;
    if (name === CLIENT_HEADER) {
      // The client's address as nginx saw it (the nginx plane's fallback); from anyone else, dropped.
      if (behindNginx && (client === '127.0.0.1' || client === '::1' || client === '::ffff:127.0.0.1')) client = raw[i + 1]!;
      continue;
    }
    if (name === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? raw[i + 1]! : `${forwardedFor}, ${raw[i + 1]!}`;
      continue;
    }
    if (SINGLE.has(name)) {
      if (name === 'host' ? seenHost : seenLength) continue;
      if (name === 'host') seenHost = true;
      else seenLength = true;
    }
    headers.push(name, raw[i + 1]!);
  }
  headers.push(
    'x-forwarded-for',
    forwardedFor === undefined ? client : `${forwardedFor}, ${client}`,
    'x-forwarded-proto',
    scheme,
    'x-forwarded-host',
    req.headers.host ?? '',
  );
  return headers;
}

/**
 * One proxied exchange, as an undici dispatch handler: the app's status and headers are written
 * as they arrive, each body chunk is written as it comes (back-pressure pauses the app's socket),
 * nothing is buffered. Ends the upstream's in-flight count once, when the response closes.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private abort?: (error?: Error) => void;
  private paused = false;
  private left = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly upstream: Upstream,
  ) {
    res.once('close', this.onClose);
  }

  private readonly onClose = (): void => {
    // The client went away before the app finished: stop the upstream exchange too.
    if (!this.res.writableFinished) this.abort?.();
    if (!this.left) {
      this.left = true;
      this.upstream.leave();
    }
  };

  private readonly onDrain = (): void => {
    this.paused = false;
    this.resume?.();
  };

  private resume?: () => void;

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    this.resume = resume;
    const headers: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      if (!HOP_BY_HOP.has(name)) headers.push(name, rawHeaders[i + 1]!.toString('latin1'));
    }
    this.res.writeHead(statusCode, statusText, headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    if (!this.paused) {
      this.paused = true;
      this.res.once('drain', this.onDrain);
    }
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(): void {
    const res = this.res;
    if (!res.headersSent && !res.destroyed) res.writeHead(502, BAD_GATEWAY_HEAD).end(BAD_GATEWAY);
    else res.destroy();
  }
}

/**
 * A plain streaming reverse proxy to a local app: method, path, headers and body pass through,
 * responses stream back as they come, websockets (Upgrade) are piped both ways.
 * HTTP goes through one undici `Pool` per upstream (keep-alive, no pipelining, as many
 * connections as there are requests in flight): its parser and request writer cost the edge
 * about half of what `http.request` + an `Agent` did (bench/README.md).
 */
export class ReverseProxy {
  private readonly pools = new Map<string, Pool>();

  /** `behindNginx`: the nginx plane hands requests over from the loopback with the client's address in X-Slipway-Client. */
  constructor(
    private readonly scheme: string,
    private readonly behindNginx = false,
  ) {}

  private pool(upstream: Upstream): Pool {
    const key = `${upstream.host}:${upstream.port}`;
    let pool = this.pools.get(key);
    if (!pool) {
      // No header/body timeouts: long polls and slow streams are the app's business (as before).
      // Idle connections are closed after 4 s, before Node's default server keep-alive (5 s)
      // closes them under a request (undici also honours a `Keep-Alive: timeout=` hint).
      pool = new Pool(`http://${upstream.host.includes(':') ? `[${upstream.host}]` : upstream.host}:${upstream.port}`, {
        connections: null,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  forward(req: IncomingMessage, res: ServerResponse, upstream: Upstream): void {
    upstream.enter();
    const exchange = new Exchange(res, upstream);
    // Most requests have no body: no stream for undici to read then.
    const body = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined ? null : req;
    this.pool(upstream).dispatch(
      { method: req.method as Dispatcher.HttpMethod, path: req.url ?? '/', headers: forwardedHeaders(req, this.scheme, this.behindNginx), body },
      exchange,
    );
  }

  /** Closes the connections to an upstream that was stopped (its port may be reused later). */
  forget(host: string, port: number): void {
    const key = `${host}:${port}`;
    const pool = this.pools.get(key);
    if (!pool) return;
    this.pools.delete(key);
    void pool.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
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
      const headers = forwardedHeaders(req, this.scheme, this.behindNginx);
      let head0 = `${req.method} ${req.url} HTTP/1.1\r\nconnection: Upgrade\r\nupgrade: ${req.headers.upgrade}\r\n`;
      for (let i = 0; i < headers.length; i += 2) head0 += `${headers[i]}: ${headers[i + 1]}\r\n`;
      target.write(`${head0}\r\n`);
      if (head.length) target.write(head);
      target.pipe(socket);
      socket.pipe(target);
    });
    target.setNoDelay(true);
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
