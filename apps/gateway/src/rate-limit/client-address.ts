/**
 * The client's address for rate limits: the TCP peer, unless the peer is a trusted proxy, in which
 * case the right-most X-Forwarded-For entry that is not itself a trusted proxy. Entries a client
 * wrote to the left of it are ignored, and X-Forwarded-For from an untrusted peer is ignored
 * entirely, so rotating a spoofed header never gives a fresh count.
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

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the IPv4 address; zone ids are dropped. */
export function normaliseIp(ip: string): string {
  const plain = ip.replace(/%.*$/, '').toLowerCase();
  return plain.startsWith('::ffff:') && plain.includes('.') ? plain.slice(7) : plain;
}

/** IPv4 address or IPv6 /64: shared with the applications' sign-in service (@slipway/server). */
export { addressBucket } from '@slipway/server';
