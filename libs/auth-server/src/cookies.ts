import { createHmac, timingSafeEqual } from 'node:crypto';

/** The sign-in service's session cookie; the library re-issues it under the same name on the app's host. */
export const SESSION_COOKIE = '__Secure-slipway.session_token';

/** Cookies of the sign-in service are the only ones forwarded to it (the app's own stay private). */
export function isServiceCookie(name: string): boolean {
  return name.startsWith('__Secure-slipway.') || name.startsWith('slipway.');
}

export function parseCookies(header: string | null | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** The raw session token when the cookie's signature is right (Better Auth's `token.base64(HMAC)` value). */
export function verifySessionCookie(secret: string, value: string | undefined): string | null {
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
 * Makes a cookie the sign-in service set on its own host (path `/a/{slug}`) first-party on the
 * application's host: same name, value, lifetime and flags, `Path=/`, no `Domain`.
 */
export function firstPartySetCookie(setCookie: string): string {
  const [pair, ...attributes] = setCookie.split(';');
  const kept = attributes.map((a) => a.trim()).filter((a) => a && !/^(path|domain)=/i.test(a));
  return [pair!.trim(), 'Path=/', ...kept].join('; ');
}
