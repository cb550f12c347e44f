import { signClientAddress, CLIENT_ADDRESS_HEADER } from './client-address.js';
import { firstPartySetCookie, isServiceCookie, parseCookies } from './cookies.js';
import type { AuthServerOptions } from './options.js';

export interface HandlerContext {
  /** The visitor's address as the app's server sees it (forwarded signed, for the service's rate limits). */
  clientAddress?: string;
}

export type AuthHandler = (request: Request, context?: HandlerContext) => Promise<Response>;

const FORWARDED_REQUEST_HEADERS = ['accept', 'accept-language', 'content-type', 'origin', 'referer', 'user-agent', 'authorization'];
const DROPPED_RESPONSE_HEADERS = new Set(['set-cookie', 'content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'vary']);

/**
 * A Web `Request` → `Response` handler for the app's own server: forwards `${mountPath}/*` to the
 * sign-in service and re-issues its cookies first-party, so the browser only ever talks to the
 * app's host (third-party cookie blocking does not matter).
 */
export function createAuthHandler(options: AuthServerOptions): AuthHandler {
  const mountPath = (options.mountPath ?? '/api/auth').replace(/\/+$/, '');
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  return async (request, context = {}) => {
    const url = new URL(request.url);
    if (url.pathname !== mountPath && !url.pathname.startsWith(`${mountPath}/`)) return new Response('Not found', { status: 404 });
    const target = `${baseUrl}${url.pathname.slice(mountPath.length) || '/'}${url.search}`;

    const headers = new Headers();
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const cookies = [...parseCookies(request.headers.get('cookie'))].filter(([name]) => isServiceCookie(name));
    if (cookies.length) headers.set('cookie', cookies.map(([n, v]) => `${n}=${v}`).join('; '));
    if (context.clientAddress) headers.set(CLIENT_ADDRESS_HEADER, signClientAddress(options.cookieSecret, context.clientAddress));

    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const upstream = await fetch(target, { method: request.method, headers, body: hasBody ? await request.arrayBuffer() : undefined, redirect: 'manual' });

    const out = new Headers();
    upstream.headers.forEach((value, name) => {
      if (!DROPPED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-')) out.set(name, value);
    });
    for (const cookie of upstream.headers.getSetCookie()) out.append('set-cookie', firstPartySetCookie(cookie));
    out.set('cache-control', upstream.headers.get('cache-control') ?? 'no-store');
    const body = request.method === 'HEAD' || upstream.status === 204 || upstream.status === 304 ? null : await upstream.arrayBuffer();
    return new Response(body, { status: upstream.status, headers: out });
  };
}
