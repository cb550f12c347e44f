import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'slipway_session';

/** The session token from the Cookie header (no cookie-parser: this is the only cookie we read). */
export function readSessionCookie(request: Request): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** HttpOnly + SameSite=Lax always; Secure whenever the platform is served over https. */
export function writeSessionCookie(response: Response, token: string, expiresAt: Date, secure: boolean): void {
  response.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires: expiresAt });
}

export function clearSessionCookie(response: Response, secure: boolean): void {
  response.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}
