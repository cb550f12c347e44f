import { isIPv4, isIPv6 } from 'node:net';

/**
 * What one client is counted as by the sign-in limits (owners' dashboard and applications' sign-in
 * service alike): an IPv4 address, or an IPv6 /64 — one subscriber's usual allocation, which its
 * holder can rotate through freely, so counting single IPv6 addresses would give an attacker 2^64
 * allowances. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is its IPv4 address; zone ids are
 * dropped. Anything that is not an IP address (`unknown`) is its own bucket.
 */
export function addressBucket(address: string): string {
  const plain = address.replace(/%.*$/, '').toLowerCase();
  if (plain.startsWith('::ffff:') && isIPv4(plain.slice(7))) return plain.slice(7);
  if (!isIPv6(plain)) return address;
  const [head = '', tail] = plain.split('::');
  const groups = (part: string) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const full = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
