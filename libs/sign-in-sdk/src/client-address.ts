import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Header carrying the visitor's address from the application's server to the sign-in service:
 * `<address>;<unix seconds>;<base64url HMAC-SHA256(cookie secret, "client-address\n<address>\n<seconds>")>`.
 * Keyed with the application's own cookie secret, so only that application's server can vouch
 * for an address, and only for its own sign-in service.
 */
export const CLIENT_ADDRESS_HEADER = 'x-slipway-client-address';
/** How old (or how far in the future) a signed address may be before it is ignored. */
export const CLIENT_ADDRESS_MAX_SKEW_SECONDS = 60;

function mac(secret: string | Buffer, address: string, seconds: string): string {
  return createHmac('sha256', secret).update(`client-address\n${address}\n${seconds}`).digest('base64url');
}

export function signClientAddress(secret: string | Buffer, address: string, now = Date.now()): string {
  const seconds = String(Math.floor(now / 1000));
  return `${address};${seconds};${mac(secret, address, seconds)}`;
}

/** The address vouched for by a valid, fresh header; null otherwise (the caller then ignores it). */
export function verifyClientAddress(secret: string | Buffer, header: string | string[] | undefined | null, now = Date.now()): string | null {
  if (typeof header !== 'string' || header.length > 200) return null;
  const parts = header.split(';');
  if (parts.length !== 3) return null;
  const [address, seconds, given] = parts as [string, string, string];
  if (!address || !/^\d{1,12}$/.test(seconds)) return null;
  if (Math.abs(now / 1000 - Number(seconds)) > CLIENT_ADDRESS_MAX_SKEW_SECONDS) return null;
  const expected = Buffer.from(mac(secret, address, seconds));
  const presented = Buffer.from(given);
  return expected.length === presented.length && timingSafeEqual(expected, presented) ? address : null;
}
