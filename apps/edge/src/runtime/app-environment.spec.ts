import { angularAllowedHosts } from './app-environment.js';

describe("an Angular server's allowed hosts", () => {
  it("are its address under each apps domain and its custom domains, as hostnames (Angular drops the port), and the health check's", () => {
    expect(angularAllowedHosts('shop', ['localhost:8080', 'apps.example.com'], ['shop.example.org', 'Bücher.example'])).toBe(
      'shop.localhost,shop.apps.example.com,shop.example.org,xn--bcher-kva.example,127.0.0.1',
    );
  });

  it('name each host once', () => {
    expect(angularAllowedHosts('shop', ['example.com', 'example.com:443'], ['shop.example.com'])).toBe('shop.example.com,127.0.0.1');
  });
});
