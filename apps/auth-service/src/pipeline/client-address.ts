import { normaliseIp } from '../config.js';

/**
 * The client's address: the peer, unless the peer is a trusted proxy, in which case the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy. Spoofed entries to the
 * left of it are ignored, and XFF from an untrusted peer is ignored entirely.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: readonly string[]): string {
  let address = normaliseIp(peer ?? 'unknown');
  if (!trustedProxies.includes(address) || !forwardedFor) return address;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => normaliseIp(h.trim()))
    .filter(Boolean);
  while (hops.length && trustedProxies.includes(address)) address = hops.pop()!;
  return address;
}
