import fc from 'fast-check';
import type { Tenant } from '../tenants/index.js';
import { checkedRedirectTargets } from './redirect-targets.js';

const OWN = 'http://victim.localhost:8080';
const tenant = { trustedOrigins: new Set([OWN]), allowLocalhost: true } as unknown as Tenant;
/** Where the visitor's browser is when Better Auth's client sets `window.location.href` to the target. */
const PAGE = OWN;
const trustedByBrowser = (origin: string) => origin === OWN || ['localhost', '127.0.0.1', '[::1]'].includes(new URL(origin).hostname);

function verdict(value: unknown, field = 'callbackURL'): { status: number; code?: string } | { target: string } {
  try {
    return { target: checkedRedirectTargets(tenant, { [field]: value })[field as 'callbackURL']! };
  } catch (error) {
    const { status, code } = error as { status: number; code: string };
    return { status, code };
  }
}

describe('redirect targets (callbackURL, redirectTo, errorCallbackURL, newUserCallbackURL)', () => {
  it('refuses spellings a browser reads as another host with 400 and the field’s code (issue 29)', () => {
    const hostile = [
      '/\t/evil.example',
      '/\t\\evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      '/\\evil.example',
      '/x\\..\\..\\evil',
      '/%2f/evil.example',
      '/%5C%5Cevil.example',
      '/\u0000',
      '/ok\u0085',
      `${OWN}/\t`,
      'http:\\\\evil.example',
      '/%2e//evil.example',
      '/./x/..//evil.example',
      '/.//evil.example',
    ];
    for (const value of hostile) expect([value, verdict(value)]).toEqual([value, { status: 400, code: 'INVALID_CALLBACK_URL' }]);
    expect(verdict('/\t/evil.example', 'redirectTo')).toEqual({ status: 400, code: 'INVALID_REDIRECT_URL' });
    expect(verdict('/\t/evil.example', 'errorCallbackURL')).toEqual({ status: 400, code: 'INVALID_ERROR_CALLBACK_URL' });
    expect(verdict('/\t/evil.example', 'newUserCallbackURL')).toEqual({ status: 400, code: 'INVALID_NEW_USER_CALLBACK_URL' });
    for (const value of [42, ['/a'], { a: 1 }, true]) expect([value, verdict(value)]).toEqual([value, { status: 400, code: 'INVALID_CALLBACK_URL' }]);
  });

  it('refuses well-formed targets elsewhere with 403, as Better Auth does', () => {
    for (const value of [
      '//evil.example',
      'https://evil.example/',
      'http://b.localhost:8080/',
      `${OWN}@evil.example`,
      'javascript:alert(1)',
      'dashboard',
      '?x=1',
    ]) {
      expect([value, verdict(value)]).toEqual([value, { status: 403, code: 'INVALID_CALLBACK_URL' }]);
    }
  });

  it('returns accepted targets normalised', () => {
    expect(verdict('/dashboard')).toEqual({ target: '/dashboard' });
    expect(verdict('/a/../b/./c?x=1#y')).toEqual({ target: '/b/c?x=1#y' });
    expect(verdict('/café')).toEqual({ target: '/caf%C3%A9' });
    expect(verdict('HTTP://VICTIM.localhost:8080/Reset')).toEqual({ target: `${OWN}/Reset` });
    expect(verdict('http://localhost:5173')).toEqual({ target: 'http://localhost:5173/' });
    expect(checkedRedirectTargets(tenant, { callbackURL: '', redirectTo: null, other: '/\t/x' })).toEqual({});
  });

  it('property: whatever is accepted has no control character or backslash and lands, in a browser, on a trusted origin — raw and normalised', () => {
    const pieces = fc.constantFrom(
      '/',
      '//',
      '\\',
      '\t',
      '\n',
      '\r',
      '\u0000',
      '\u0085',
      ' ',
      '%2f',
      '%5c',
      '%2e',
      '.',
      '..',
      ':',
      '@',
      '?',
      '#',
      'evil.example',
      'victim.localhost',
      ':8080',
      'http:',
      'https:',
      'javascript:',
      'localhost',
      'a',
      'é',
      '%',
      '\u3000',
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 8 }).map((p) => p.join('')),
        (raw) => {
          const result = verdict(raw);
          if (!('target' in result)) return;
          // eslint-disable-next-line no-control-regex -- matching control characters is the point
          expect([raw, /[\u0000-\u001f\u007f-\u009f\\]/.test(raw)]).toEqual([raw, false]);
          // Node's URL is the WHATWG parser browsers use: tabs and newlines removed, `\` read as `/`.
          expect([raw, trustedByBrowser(new URL(raw, PAGE).origin)]).toEqual([raw, true]);
          expect([raw, result.target, trustedByBrowser(new URL(result.target, PAGE).origin)]).toEqual([raw, result.target, true]);
        },
      ),
      { numRuns: 20_000 },
    );
  });
});
