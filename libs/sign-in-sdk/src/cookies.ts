import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The session cookie on the application's own host. `__Host-`: the browser only accepts it with
 * `Secure`, `Path=/` and no `Domain`, from this very host, so a sibling host under a shared parent
 * domain cannot set one (cookie tossing).
 */
export const SESSION_COOKIE = '__Host-slipway.session_token';
/** The name the sign-in service itself uses on its own (shared, path-scoped) host. */
export const SERVICE_SESSION_COOKIE = '__Secure-slipway.session_token';

const HOST_PREFIX = '__Host-slipway.';
const SERVICE_PREFIX = '__Secure-slipway.';

/**
 * Every `name=value` pair of a Cookie header, in order. Names are compared exactly (RFC 6265: a
 * cookie name is case-sensitive), whitespace around names and values is not part of them, and a
 * value is kept as sent (quotes included).
 */
export function cookiePairs(header: string | null | undefined): [string, string][] {
  const pairs: [string, string][] = [];
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name) pairs.push([name, part.slice(eq + 1).trim()]);
  }
  return pairs;
}

/** The value of `name` when the header carries it exactly once; null when absent or ambiguous. */
export function soleCookie(header: string | null | undefined, name: string): string | null {
  const values = cookiePairs(header).filter(([n]) => n === name);
  return values.length === 1 ? values[0]![1] : null;
}

export interface ForwardedCookies {
  /** The Cookie header for the sign-in service (its own names), or null. */
  header: string | null;
  /** Set-Cookie lines clearing what must not stay: duplicated `__Host-slipway.*`, any old `__Secure-slipway.*`. */
  clear: string[];
}

/**
 * What of the visitor's cookies goes to the sign-in service: each `__Host-slipway.*` cookie sent
 * exactly once, under the service's own `__Secure-` name. A name sent twice is ambiguous (one of
 * them is not ours): neither goes, and the answer clears ours. `__Secure-slipway.*` on the app's
 * host (this library's name before the `__Host-` change, or tossed by a sibling host) is never
 * read, and is cleared too. The app's own cookies stay private.
 */
export function forwardedCookies(header: string | null | undefined): ForwardedCookies {
  const counts = new Map<string, number>();
  const pairs = cookiePairs(header);
  for (const [name] of pairs) counts.set(name, (counts.get(name) ?? 0) + 1);
  const forwarded: string[] = [];
  const clear = new Set<string>();
  for (const [name, value] of pairs) {
    if (name.startsWith(HOST_PREFIX)) {
      if (counts.get(name) === 1) forwarded.push(`${SERVICE_PREFIX}${name.slice(HOST_PREFIX.length)}=${value}`);
      else clear.add(clearing(name));
    } else if (name.startsWith(SERVICE_PREFIX)) {
      clear.add(clearing(name));
    }
  }
  return { header: forwarded.length ? forwarded.join('; ') : null, clear: [...clear] };
}

function clearing(name: string): string {
  return `${name}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`;
}

/** The raw session token when the cookie's signature is right (Better Auth's `token.base64(HMAC)` value). */
export function verifySessionCookie(secret: string, value: string | null | undefined): string | null {
  if (!value) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return null;
  }
  const dot = decoded.lastIndexOf('.');
  if (dot <= 0) return null;
  const token = decoded.slice(0, dot);
  const given = Buffer.from(decoded.slice(dot + 1), 'base64');
  const expected = createHmac('sha256', secret).update(token).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
}

/**
 * Makes a cookie the sign-in service set on its own host (`__Secure-slipway.*`, path `/a/{slug}`)
 * first-party on the application's host: `__Host-slipway.*`, same value, lifetime and flags,
 * `Secure`, `Path=/`, no `Domain`.
 */
export function firstPartySetCookie(setCookie: string): string {
  const [pair, ...attributes] = setCookie.split(';');
  let first = pair!.trim();
  if (first.startsWith(SERVICE_PREFIX)) first = `${HOST_PREFIX}${first.slice(SERVICE_PREFIX.length)}`;
  const kept = attributes.map((a) => a.trim()).filter((a) => a && !/^(path|domain)=/i.test(a));
  if (first.startsWith(HOST_PREFIX) && !kept.some((a) => /^secure$/i.test(a))) kept.push('Secure');
  return [first, 'Path=/', ...kept].join('; ');
}
