import { isIPv4 } from 'node:net';

/**
 * The client's address, as the owners' dashboard (gateway) and the applications' sign-in service
 * both count it: the TCP peer, unless the peer is one of the app's trusted proxies, in which case
 * the right-most X-Forwarded-For entry that is not itself a trusted proxy. Entries a client wrote
 * to the left of it are ignored, and X-Forwarded-For from an untrusted peer is ignored entirely,
 * so rotating a spoofed header never gives a fresh count. Which proxies to trust is each app's
 * own decision (its config); every address, trusted ones included, is compared normalised.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: readonly string[]): string {
  const trusted = new Set(trustedProxies.map(normaliseIp));
  let address = normaliseIp(peer ?? 'unknown');
  if (!trusted.has(address) || !forwardedFor) return address;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => normaliseIp(h.trim()))
    .filter(Boolean);
  while (hops.length && trusted.has(address)) address = hops.pop()!;
  return address;
}

/**
 * One spelling per address, so that no client gets a second rate-limit count (or escapes a trust
 * check) by writing its address differently: the zone id is dropped (`fe80::1%eth0` is
 * `fe80::1`), IPv6 is lower case, and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is its IPv4
 * address. Anything else (`unknown`, a hostname) is only trimmed of a zone and lower-cased.
 */
export function normaliseIp(ip: string): string {
  const plain = ip.replace(/%.*$/, '').toLowerCase();
  return plain.startsWith('::ffff:') && isIPv4(plain.slice(7)) ? plain.slice(7) : plain;
}
