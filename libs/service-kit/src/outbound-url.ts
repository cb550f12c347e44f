/**
 * Requests to URLs a tenant chose (an OpenID Connect issuer's discovery, JWKS, token and userinfo
 * endpoints): the threat model treats a tenant as hostile, so such a URL must not reach the
 * platform's own network (server-side request forgery). Used by the gateway when an owner saves
 * an issuer (an early, friendly refusal) and by the sign-in service at every request (the guard
 * that counts: the address is checked when the connection is made, after DNS, so a name that
 * resolves to 127.0.0.1 — or starts to, after the check — is refused).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';

export interface OutboundPolicy {
  /**
   * Development and tests only (`AUTH_OIDC_ALLOW_PRIVATE_ISSUERS=true`): allows http and
   * addresses on loopback, private, link-local and other internal ranges.
   */
  allowPrivate: boolean;
  /** The platform's own host names (its public URLs): never a tenant's target, whatever they resolve to. */
  platformHosts: readonly string[];
}

export class OutboundUrlRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundUrlRefused';
  }
}

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata: 169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 (reaches IPv4 inside)
  ['64:ff9b:1::', 48], // local NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, …)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (reaches IPv4 inside)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/** True for an address a tenant's URL may not reach: loopback, private, link-local, CGNAT, multicast, reserved (IPv4-mapped IPv6 read as IPv4). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    const hexMapped = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
    if (hexMapped) {
      const [hi, lo] = [parseInt(hexMapped[1]!, 16), parseInt(hexMapped[2]!, 16)];
      return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
    }
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}

function bareHost(url: URL): string {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * The checks that need no DNS: a parseable https URL (http too when `allowPrivate`) without
 * userinfo, not a platform host, not `localhost`, and — for an address literal — not a forbidden
 * address. Returns the reason for a refusal, or null.
 */
export function outboundUrlProblem(raw: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) return 'must be an https URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  const host = bareHost(url);
  // Development and tests: the platform's hosts are local ones then, and so may be an issuer's.
  if (policy.allowPrivate) return null;
  if (policy.platformHosts.some((h) => h.toLowerCase().replace(/\.$/, '') === host)) return 'must not be one of the platform’s own hosts';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not be a loopback address';
  if (isIP(host) && isForbiddenAddress(host)) return 'must not be a loopback, private, link-local or other internal address';
  return null;
}

/** `outboundUrlProblem`, then every address the name resolves to now, if it does (the owners' API's check; the request itself checks again when it connects). */
export async function outboundUrlProblemResolved(raw: string, policy: OutboundPolicy): Promise<string | null> {
  const problem = outboundUrlProblem(raw, policy);
  if (problem || policy.allowPrivate) return problem;
  const host = bareHost(new URL(raw));
  if (isIP(host)) return null;
  try {
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
    );
    if (addresses.some((a) => isForbiddenAddress(a.address))) return 'resolves to a loopback, private, link-local or other internal address';
  } catch {
    // Not resolvable yet (its DNS may come later): the request checks the address when it connects.
  }
  return null;
}

/** A `lookup` for node:http(s) that refuses, at connect time, a name resolving to any forbidden address. */
function guardedLookup(policy: OutboundPolicy) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      if (!policy.allowPrivate && (addresses.length === 0 || addresses.some((a) => isForbiddenAddress(a.address))))
        return callback(new OutboundUrlRefused(`${hostname} resolves to a loopback, private, link-local or other internal address`), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

export interface OutboundRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Largest body read; a longer answer fails. Default 256 KiB. */
  maxBytes?: number;
  /** For the whole exchange, redirects included. Default 10 s. */
  timeoutMs?: number;
  /** GET only; each hop is checked like the first. Default 3 (0 for POST). */
  maxRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/**
 * One request to a tenant-chosen URL under `policy`: the URL checked, the address checked when the
 * socket connects, redirects followed only for GET and each hop checked again, a size and time limit.
 */
export async function fetchOutbound(raw: string, policy: OutboundPolicy, request: OutboundRequest = {}): Promise<OutboundResponse> {
  const method = request.method ?? 'GET';
  const maxBytes = request.maxBytes ?? 256 * 1024;
  const deadline = Date.now() + (request.timeoutMs ?? 10_000);
  let redirectsLeft = method === 'GET' ? (request.maxRedirects ?? 3) : 0;
  let target = raw;
  for (;;) {
    const problem = outboundUrlProblem(target, policy);
    if (problem) throw new OutboundUrlRefused(`the URL ${problem}`);
    const answer = await once(new URL(target), method, request, policy, maxBytes, Math.max(1, deadline - Date.now()));
    const location = answer.headers.location;
    if (answer.status >= 300 && answer.status < 400 && location) {
      if (redirectsLeft-- <= 0) throw new OutboundUrlRefused(`${new URL(target).origin} redirected (not followed)`);
      target = new URL(location, target).toString();
      continue;
    }
    return answer;
  }
}

function once(url: URL, method: string, request: OutboundRequest, policy: OutboundPolicy, maxBytes: number, timeoutMs: number): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const host = bareHost(url);
    const req = send(
      url,
      {
        method,
        headers: {
          'user-agent': 'slipway-auth',
          ...(request.headers ?? {}),
          ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
        },
        lookup: guardedLookup(policy) as never,
        // Address literals skip `lookup`: checked by outboundUrlProblem; the servername stays the URL's host.
        ...(isIP(host) ? {} : { servername: host }),
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new OutboundUrlRefused(`${url.origin} answered more than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`${url.origin} did not answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`${url.origin} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}
