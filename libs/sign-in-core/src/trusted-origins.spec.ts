import { applicationOrigins, isClaimableHost } from './trusted-origins.js';

describe('what may become a trusted origin (issue 20: no cross-tenant trust through "localhost")', () => {
  it('registers the application’s own address under each publishing domain and its ordinary custom domains', () => {
    const origins = applicationOrigins('shop', ['localhost:8080', 'apps.example.net'], 'http', [
      { id: 'd1', hostname: 'Shop.Example.com', verifiedAt: new Date() },
    ]).map((e) => e.origin);
    expect(origins).toEqual(['http://shop.localhost:8080', 'http://shop.apps.example.net', 'https://shop.example.com', 'http://shop.example.com']);
  });

  it('never registers the developer’s machine, a *.localhost name, or another tenant’s host under a publishing domain', () => {
    const hostile = [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'b.localhost',
      'shop.localhost.',
      'x.y.localhost',
      '127.0.0.1',
      '127.1.2.3',
      '[::1]',
      '0.0.0.0',
      'b.apps.example.net',
      'B.APPS.EXAMPLE.NET',
      'apps.example.net',
      'x.shop.apps.example.net',
    ];
    for (const hostname of hostile) {
      expect([hostname, isClaimableHost(hostname, 'shop', ['localhost:8080', 'apps.example.net'])]).toEqual([hostname, false]);
      const origins = applicationOrigins('shop', ['localhost:8080', 'apps.example.net'], 'https', [{ id: 'd', hostname, verifiedAt: new Date() }]);
      expect(origins.filter((e) => e.source === 'custom_domain')).toEqual([]);
    }
    for (const hostname of ['shop.example.com', 'localhost.example.com', 'example.net', 'shop.apps.example.net']) {
      expect([hostname, isClaimableHost(hostname, 'shop', ['localhost:8080', 'apps.example.net'])]).toEqual([hostname, true]);
    }
  });
});
