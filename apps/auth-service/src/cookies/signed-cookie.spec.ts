import { createHmac } from 'node:crypto';
import type { Tenant } from '../tenants/index.js';
import { SESSION_COOKIE, readSignedCookie, sessionCookie, signedCookie, tokenFromCookieHeader } from './index.js';

const tenant = { slug: 'shop', cookieSecret: Buffer.from('0123456789abcdef0123456789abcdef') } as Tenant;
const other = { slug: 'blog', cookieSecret: Buffer.from('fedcba9876543210fedcba9876543210') } as Tenant;
const pair = (setCookie: string) => setCookie.split(';')[0]!;
const valueOf = (setCookie: string) => pair(setCookie).slice(pair(setCookie).indexOf('=') + 1);

describe('signed cookies', () => {
  it('signs the session cookie in Better Auth’s format (what @slipway/sign-in-sdk checks with the same secret)', () => {
    const line = sessionCookie(tenant, 'tok123', 60);
    const expected = encodeURIComponent(`tok123.${createHmac('sha256', tenant.cookieSecret).update('tok123').digest('base64')}`);
    expect(line).toBe(`${SESSION_COOKIE}=${expected}; Max-Age=60; Path=/a/shop; HttpOnly; Secure; SameSite=Lax`);
    expect(tokenFromCookieHeader(tenant, pair(line))).toBe('tok123');
    expect(tokenFromCookieHeader(other, pair(line))).toBeNull();
  });

  it('binds every other cookie’s signature to its name: a value signed under one name is refused under another', () => {
    const challenge = signedCookie(tenant, '__Secure-slipway.two_factor', 'abc!user1', 600);
    expect(readSignedCookie(tenant, pair(challenge), '__Secure-slipway.two_factor')).toBe('abc!user1');
    expect(readSignedCookie(tenant, `__Secure-slipway.passkey_challenge=${valueOf(challenge)}`, '__Secure-slipway.passkey_challenge')).toBeNull();
    // A session cookie (the visitor's own token) replayed as a challenge or as the admin's kept session.
    const session = sessionCookie(tenant, 'tok123', null);
    expect(readSignedCookie(tenant, `__Secure-slipway.two_factor=${valueOf(session)}`, '__Secure-slipway.two_factor')).toBeNull();
    expect(readSignedCookie(tenant, `__Secure-slipway.admin_session=${valueOf(session)}`, '__Secure-slipway.admin_session')).toBeNull();
    // Another tenant's, and two of one name (cookie tossing).
    expect(readSignedCookie(other, pair(challenge), '__Secure-slipway.two_factor')).toBeNull();
    expect(readSignedCookie(tenant, `${pair(challenge)}; ${pair(challenge)}`, '__Secure-slipway.two_factor')).toBeNull();
  });
});
