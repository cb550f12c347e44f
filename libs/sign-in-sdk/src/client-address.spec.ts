import { signClientAddress, verifyClientAddress } from './client-address.js';
import { firstPartySetCookie, verifySessionCookie } from './cookies.js';
import { createHmac } from 'node:crypto';

describe('signed client address', () => {
  const now = Date.UTC(2026, 0, 1);
  it('round-trips a fresh address signed with the same secret', () => {
    expect(verifyClientAddress('secret-a', signClientAddress('secret-a', '2001:db8::1', now), now + 5000)).toBe('2001:db8::1');
  });
  it('ignores another secret, a stale or future timestamp, edits and junk', () => {
    const header = signClientAddress('secret-a', '203.0.113.5', now);
    expect(verifyClientAddress('secret-b', header, now)).toBeNull();
    expect(verifyClientAddress('secret-a', header, now + 61_000)).toBeNull();
    expect(verifyClientAddress('secret-a', header, now - 61_000)).toBeNull();
    expect(verifyClientAddress('secret-a', header.replace('203.0.113.5', '203.0.113.6'), now)).toBeNull();
    for (const junk of [undefined, '', 'a;b', 'x;1;y;z', ['a', 'b']]) expect(verifyClientAddress('secret-a', junk as never, now)).toBeNull();
  });
});

describe('cookies', () => {
  it('re-issues the service cookie first-party under __Host-', () => {
    expect(firstPartySetCookie('__Secure-slipway.session_token=abc; Max-Age=604800; Path=/a/shop; HttpOnly; Secure; SameSite=Lax')).toBe(
      '__Host-slipway.session_token=abc; Path=/; Max-Age=604800; HttpOnly; Secure; SameSite=Lax',
    );
    expect(firstPartySetCookie('__Secure-slipway.oauth_state=s; Domain=auth.example; Path=/a/shop; HttpOnly')).toBe(
      '__Host-slipway.oauth_state=s; Path=/; HttpOnly; Secure',
    );
  });
  it('verifies the signed session cookie like the service signs it', () => {
    const token = 't'.repeat(32);
    const value = encodeURIComponent(`${token}.${createHmac('sha256', 's3cret').update(token).digest('base64')}`);
    expect(verifySessionCookie('s3cret', value)).toBe(token);
    expect(verifySessionCookie('other', value)).toBeNull();
    expect(verifySessionCookie('s3cret', 'garbage')).toBeNull();
  });
});
