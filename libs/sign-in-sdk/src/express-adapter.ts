import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthHandler } from './proxy-handler.js';

type NodeRequest = IncomingMessage & { originalUrl?: string; ip?: string; body?: unknown; protocol?: string };

/**
 * Express (or plain node:http) adapter: `app.use('/api/auth', expressHandler(auth.handler))`.
 * The visitor's address is `req.ip`, so Express's `trust proxy` setting decides whether an
 * X-Forwarded-For from the platform's edge is believed.
 */
export function expressHandler(handler: AuthHandler) {
  return (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void): void => {
    run(handler, req, res).catch((error: unknown) => {
      if (next) next(error);
      else if (!res.headersSent) res.writeHead(502).end();
    });
  };
}

async function run(handler: AuthHandler, req: NodeRequest, res: ServerResponse): Promise<void> {
  const given = req.headers.host ?? '';
  const host = /^[A-Za-z0-9.:[\]-]+$/.test(given) ? given : 'localhost';
  // Never resolved against a base: a target like `//evil.example/api/auth/…` stays a path.
  const target = req.originalUrl ?? req.url ?? '/';
  const url = new URL(`${req.protocol ?? 'http'}://${host}${target.startsWith('/') ? target : `/${target}`}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(url, { method: req.method, headers, body: hasBody ? await bodyOf(req) : undefined });
  const response = await handler(request, { clientAddress: req.ip ?? req.socket.remoteAddress });
  const outHeaders: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') outHeaders[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) outHeaders['set-cookie'] = cookies;
  res.writeHead(response.status, outHeaders);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** The raw body, or the one a body parser already consumed, serialised again. */
async function bodyOf(req: NodeRequest): Promise<Buffer> {
  if (req.readableEnded && req.body !== undefined) {
    if (Buffer.isBuffer(req.body)) return req.body;
    if (typeof req.body === 'string') return Buffer.from(req.body);
    const type = String(req.headers['content-type'] ?? '');
    if (type.includes('application/x-www-form-urlencoded')) return Buffer.from(new URLSearchParams(req.body as Record<string, string>).toString());
    return Buffer.from(JSON.stringify(req.body));
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
