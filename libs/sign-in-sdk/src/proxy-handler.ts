import { signClientAddress, CLIENT_ADDRESS_HEADER } from './client-address.js';
import { firstPartySetCookie, forwardedCookies } from './cookies.js';
import type { AuthServerOptions } from './options.js';

export interface HandlerContext {
  /** The visitor's address as the app's server sees it (forwarded signed, for the service's rate limits). */
  clientAddress?: string;
}

export type AuthHandler = (request: Request, context?: HandlerContext) => Promise<Response>;

const FORWARDED_REQUEST_HEADERS = ['accept', 'accept-language', 'content-type', 'origin', 'referer', 'user-agent', 'authorization'];
/**
 * The one spelling of a path the sign-in service answers (as its own gate): segments of unreserved
 * characters, no percent-encoding, `;`, empty segment (doubled or trailing slash), `.` or `..`.
 * Anything else is answered 404 here in the service's shape and never forwarded. (Dot segments
 * are already resolved by the URL parser, so `/api/auth/x/../sign-in/email` IS `/api/auth/sign-in/email`.)
 */
const CANONICAL_REST = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)+$/;

function notFound(): Response {
  return new Response(JSON.stringify({ code: 'NOT_FOUND', message: 'Not found' }), {
    status: 404,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}

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
    if (!url.pathname.startsWith(`${mountPath}/`)) return notFound();
    const rest = url.pathname.slice(mountPath.length);
    if (!CANONICAL_REST.test(rest)) return notFound();
    const target = `${baseUrl}${rest}${url.search}`;

    const headers = new Headers();
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const cookies = forwardedCookies(request.headers.get('cookie'));
    if (cookies.header) headers.set('cookie', cookies.header);
    if (context.clientAddress) headers.set(CLIENT_ADDRESS_HEADER, signClientAddress(options.cookieSecret, context.clientAddress));

    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    const upstream = await fetch(target, { method: request.method, headers, body: hasBody ? await request.arrayBuffer() : undefined, redirect: 'manual' });

    const out = new Headers();
    upstream.headers.forEach((value, name) => {
      if (!DROPPED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-')) out.set(name, value);
    });
    // Ambiguous or old cookies are cleared first, so a cookie the service sets in this answer wins.
    for (const cookie of cookies.clear) out.append('set-cookie', cookie);
    for (const cookie of upstream.headers.getSetCookie()) out.append('set-cookie', firstPartySetCookie(cookie));
    out.set('cache-control', upstream.headers.get('cache-control') ?? 'no-store');
    const body = request.method === 'HEAD' || upstream.status === 204 || upstream.status === 304 ? null : await upstream.arrayBuffer();
    return new Response(body, { status: upstream.status, headers: out });
  };
}
