import fc from 'fast-check';
import { originCases } from '../../test/origin-arbitrary.js';
import type { Tenant } from '../tenants/index.js';
import { isTrustedOrigin } from './origin-check.js';
import { checkedRedirectTargets } from './redirect-targets.js';

const tenant = (allowLocalhost: boolean) => ({ trustedOrigins: new Set(['http://victim.localhost:8080']), allowLocalhost }) as unknown as Tenant;

describe('isTrustedOrigin (property: only the tenant’s exact origins and the three loopback hosts)', () => {
  it('decides every generated origin as its parts call for', () => {
    fc.assert(
      fc.property(originCases({ scheme: 'http', host: 'victim.localhost', port: 8080 }), (c) => {
        expect([c.value, isTrustedOrigin(tenant(true), c.value)]).toEqual([c.value, c.trusted]);
      }),
      { numRuns: 5000 },
    );
  });

  it('trusts no loopback host while local development is off', () => {
    fc.assert(
      fc.property(originCases({ scheme: 'http', host: 'victim.localhost', port: 8080 }), (c) => {
        const own = isTrustedOrigin(tenant(false), c.value);
        expect([c.value, own]).toEqual([c.value, c.trusted && new URL(c.value).origin === 'http://victim.localhost:8080']);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses another tenant’s host under the publishing domain and other "localhost" look-alikes', () => {
    for (const value of [
      'http://b.localhost:8080',
      'http://b.localhost:8080/reset',
      'http://localhost.:5173',
      'http://victim.localhost.:8080',
      'http://victim.localhost:8080@b.localhost:8080',
      'http://@localhost:5173',
      'http://:@localhost',
    ]) {
      expect([value, isTrustedOrigin(tenant(true), value)]).toEqual([value, false]);
    }
    for (const value of ['http://localhost:5173', 'http://127.0.0.1:3000/x', 'http://[::1]:8080', 'https://localhost', 'http://victim.localhost:8080/reset']) {
      expect([value, isTrustedOrigin(tenant(true), value)]).toEqual([value, true]);
    }
    expect(() => checkedRedirectTargets(tenant(true), { redirectTo: 'http://b.localhost:8080/reset' })).toThrow(
      expect.objectContaining({ status: 403, code: 'INVALID_REDIRECT_URL' }),
    );
  });
});
