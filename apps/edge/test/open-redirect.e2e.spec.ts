import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, sourceTar, waitFor } from '@slipway/testing';
import fc from 'fast-check';
import { rawGet } from './raw-http.js';

/** Where a browser on the app's page goes with this Location (WHATWG URL: tabs/newlines stripped, `\` read as `/`). */
const BASE = 'http://app.localhost:8080/';
const origin = (location: string) => new URL(location, BASE).origin;

/**
 * No Location the edge emits leads off the app's origin, however the request path is spelled:
 * a directory named like a host (`evil.example/`) reached as `//evil.example` used to answer
 * `301 Location: //evil.example/`, which a browser follows to evil.example.
 */
describe('edge redirects stay on the app origin (real edge, worker, Postgres, Redis)', () => {
  let h: DeployHarness;
  let port: number;
  const host = () => `redirects.localhost:${port}`;
  const send = (path: string) => rawGet(port, host(), path);

  beforeAll(async () => {
    h = await DeployHarness.create('edge-redirects');
    port = await freePort();
    await h.startEdge(port);
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}` });
    const applicationId = await h.createApplication({ slug: 'redirects' });
    const extra = { 'evil.example/index.html': '<h1>a directory named like a host</h1>', 'a/b/index.html': '<h1>a/b</h1>', 'é/index.html': '<h1>accent</h1>' };
    const row = await h.waitForFinal(await h.deploy(applicationId, await sourceTar(join(FIXTURES, 'static-site'), extra)));
    if (row.status !== 'succeeded') throw new Error(`static deploy failed: ${JSON.stringify(row.error)}`);
    await waitFor(async () => (await send('/about/')).status === 200, { timeoutMs: 10_000, what: 'the site to be served' });
    // With EDGE_DATA_PLANE=nginx, nginx itself answers (`Server: nginx`), not the Node edge behind it.
    expect((await send('/about/')).headers['server']).toBe(process.env['EDGE_DATA_PLANE'] === 'nginx' ? 'nginx' : undefined);
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it('redirects a directory to its trailing-slash form on the same origin, whatever leads to it', async () => {
    const variants: [string, string][] = [
      ['//evil.example', '/evil.example/'],
      ['///evil.example', '/evil.example/'],
      ['/%2fevil.example', '/evil.example/'],
      ['/%2F%2Fevil.example', '/evil.example/'],
      ['//%2fevil.example', '/evil.example/'],
      ['/%2f/%2F/evil.example', '/evil.example/'],
      ['//evil.example?next=//other.example', '/evil.example/?next=//other.example'],
      ['/evil.example', '/evil.example/'],
      ['/%65vil.example', '/evil.example/'],
      ['//a//b', '/a/b/'],
      ['/a/%2fb', '/a/b/'],
      ['//about', '/about/'],
      ['/%C3%A9', '/%C3%A9/'],
      ['//%C3%A9', '/%C3%A9/'],
    ];
    for (const [path, location] of variants) {
      const response = await send(path);
      expect({ path, status: response.status, location: response.headers['location'] }).toEqual({ path, status: 301, location });
      expect(origin(location)).toBe(new URL(BASE).origin);
    }
  });

  it('refuses the spellings browsers turn into another origin instead of redirecting them', async () => {
    const variants = [
      '/\\evil.example',
      '/%5cevil.example',
      '/%5C%5Cevil.example',
      '/\\/evil.example',
      '/%5c/evil.example',
      '/%09/evil.example',
      '/%0a/evil.example',
      '/%0d%0a/evil.example',
      '/%09%2fevil.example',
      '/./evil.example',
      '/%2e/evil.example',
      '/\t/evil.example',
      '/ /evil.example',
    ];
    for (const path of variants) {
      const response = await send(path);
      expect({ path, location: response.headers['location'] }).toEqual({ path, location: undefined });
      expect({ path, status: [400, 404].includes(response.status) }).toEqual({ path, status: true });
    }
  });

  it('property: every Location answered to a random path resolves to the app origin', async () => {
    // Slashes that collapse (and so redirect), and what browsers read as one (refused).
    const separator = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('/', '//', '%2f', '%2F', '/%2f') },
      { weight: 2, arbitrary: fc.constantFrom('\\', '%5c', '%5C', '\t', '%09', '\n', '%0a', '%0D', ' ', '%20', '\u3000') },
    );
    const part = fc.oneof(
      { weight: 3, arbitrary: separator },
      {
        weight: 2,
        arbitrary: fc.constantFrom('%00', 'é', '%C3%A9', '😀', '.', '%2e', '..', '?', '#', '@', ':', '%', '%25', 'evil.example', 'about', 'a', 'b'),
      },
    );
    // Biased toward what redirects: separators, then a directory name without its trailing slash.
    const dir = fc.constantFrom('evil.example', 'about', 'a', 'a/b', 'a%2fb', '%C3%A9', '%65vil.example', '');
    const path = fc
      .tuple(fc.array(part, { maxLength: 5 }), dir, fc.option(part, { freq: 4 }))
      .map(([before, name, after]) => `/${before.join('')}${name}${after ?? ''}`);
    let redirects = 0;
    await fc.assert(
      fc.asyncProperty(path, async (p) => {
        const response = await send(p);
        const location = response.headers['location'];
        if (location === undefined) return;
        redirects += 1;
        expect({ path: p, location, origin: origin(location) }).toEqual({ path: p, location, origin: new URL(BASE).origin });
        expect(location).toMatch(/^\/[^/\\\s]/);
      }),
      { numRuns: 600 },
    );
    // The property was exercised, not vacuously true.
    expect(redirects).toBeGreaterThan(25);
  }, 120_000);
});
