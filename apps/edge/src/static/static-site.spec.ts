import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StaticCache } from './static-cache.js';
import { StaticSite } from './static-site.js';

interface Reply {
  status: number;
  location: string | undefined;
  body: string;
}

/** A raw request (the path goes out exactly as written: no `..` folding). */
function get(port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The edge's static handler behind a real HTTP server, serving a release directory that holds
 * links out of it — as a release written by an older extractor, or by hand, could. What lies
 * outside must not be served, and must not be told apart from what does not exist.
 */
describe('StaticSite: links never leave the release (real files, real HTTP)', () => {
  let base: string;
  const servers: Server[] = [];

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'slipway-static-'));
    const release = join(base, 'releases', 'r1');
    await mkdir(join(release, 'about'), { recursive: true });
    await writeFile(join(release, 'index.html'), '<h1>home</h1>');
    await writeFile(join(release, 'about', 'index.html'), '<h1>about</h1>');
    await writeFile(join(release, 'big.txt'), 'b'.repeat(300 * 1024));
    await mkdir(join(base, 'outside', 'sub'), { recursive: true });
    await writeFile(join(base, 'outside', 'secret.txt'), 'outside-secret-canary');
    await writeFile(join(base, 'outside', 'sub', 'index.html'), 'outside-index-canary');
    await symlink('../../outside', join(release, 'up'));
    await symlink('../../no-such-dir', join(release, 'gone'));
    await symlink('/etc', join(release, 'etc'));
    await symlink('c2', join(release, 'chain'));
    await symlink('../..', join(release, 'c2'));
    await symlink('about', join(release, 'in'));
    await symlink('../outside/secret.txt', join(release, 'about', 'leak.txt'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await rm(base, { recursive: true, force: true });
  });

  async function serve(spaFallback: boolean): Promise<number> {
    const site = new StaticSite('r1', join(base, 'releases', 'r1'), spaFallback, new StaticCache(8 * 1024 * 1024));
    const server = createServer((req, res) => void site.serve(req, res));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  it('answers a path through a link out of the release exactly as a path that does not exist', async () => {
    const port = await serve(false);
    const absent = await get(port, '/no-such-thing');
    expect(absent).toEqual({ status: 404, location: undefined, body: 'Not Found\n' });
    const probes = [
      // A directory outside that exists, one that does not, and what is in them.
      '/up',
      '/up/',
      '/gone',
      '/gone/',
      '/up/sub',
      '/up/sub/',
      '/up/nosub',
      '/up/secret.txt',
      '/up/sub/index.html',
      '/etc',
      '/etc/',
      '/etc/ssl',
      '/etc/passwd',
      '/etc/no-such-file',
      '/chain',
      '/chain/',
      '/chain/outside/secret.txt',
      '/chain/releases',
      '/chain/no-such-dir',
      '/about/leak.txt',
      '/in/leak.txt',
      // Spelled as traversal: refused before the file system, whatever exists there.
      '/..',
      '/../',
      '/../outside/',
      '/../no-such-dir/',
      '/%2e%2e/',
      '/%2e%2e/outside',
      '/about/../../outside/',
      '/..%2f..%2foutside/',
    ];
    for (const path of probes) expect({ path, ...(await get(port, path)) }).toEqual({ path, ...absent });
  });

  it('still follows links that stay inside, and redirects only for directories that are really inside', async () => {
    const port = await serve(false);
    expect(await get(port, '/about')).toEqual({ status: 301, location: '/about/', body: '' });
    expect(await get(port, '/in')).toEqual({ status: 301, location: '/in/', body: '' });
    expect(await get(port, '/in/')).toMatchObject({ status: 200, body: '<h1>about</h1>' });
    // Too big for the cache: streamed from a no-follow open.
    expect((await get(port, '/big.txt')).body).toBe('b'.repeat(300 * 1024));
  });

  it('with the single-page-app fallback, an outside path gets the same page as any unknown path', async () => {
    const port = await serve(true);
    const absent = await get(port, '/no-such-thing');
    expect(absent).toMatchObject({ status: 200, body: '<h1>home</h1>' });
    for (const path of ['/up', '/up/sub', '/up/sub/', '/gone', '/etc', '/etc/ssl', '/chain/outside', '/chain/outside/sub']) {
      expect({ path, ...(await get(port, path)) }).toEqual({ path, ...absent });
    }
  });
});

describe('StaticSite: cache headers by name (real files, real HTTP)', () => {
  it('immutable for content-hashed names (Vite, SvelteKit, Nuxt hash-only), revalidated for the rest', async () => {
    const base = await mkdtemp(join(tmpdir(), 'slipway-static-cache-'));
    const names = ['assets/index-DxK3a9Q1.js', 'entry.DEVlFBXh.css', '_nuxt/Btu1cy1g.js', '_nuxt/app.js', 'bootstrap5.js', 'analytics.js', 'lib/Btu1cy1g.js'];
    for (const name of names) {
      await mkdir(join(base, name, '..'), { recursive: true });
      await writeFile(join(base, name), 'x');
    }
    const site = new StaticSite('r2', base, false, new StaticCache(1024 * 1024));
    const server = createServer((req, res) => void site.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const header = (path: string) =>
        new Promise<string | undefined>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path }, (res) => resolve(res.resume().headers['cache-control']))
            .on('error', reject)
            .end();
        });
      const seen = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await header(`/${name}`)] as const)));
      const immutable = 'public, max-age=31536000, immutable';
      const revalidate = 'public, max-age=0, must-revalidate';
      expect(seen).toEqual({
        'assets/index-DxK3a9Q1.js': immutable,
        'entry.DEVlFBXh.css': immutable,
        '_nuxt/Btu1cy1g.js': immutable,
        '_nuxt/app.js': revalidate,
        'bootstrap5.js': revalidate,
        'analytics.js': revalidate,
        'lib/Btu1cy1g.js': revalidate,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await rm(base, { recursive: true, force: true });
    }
  });
});
