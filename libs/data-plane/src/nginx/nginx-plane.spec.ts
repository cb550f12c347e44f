import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import { connect, createServer as netServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gzipSync } from 'node:zlib';
import { framing } from '@slipway/testing';
import { NginxPlane } from './nginx-plane.js';
import { workersOf } from './nginx-process.js';
import { materializeStaticTree } from './static-tree.js';
import { SLOT_SWITCH_MS, type Site } from './nginx-config.js';

const { AFTER, AMBIGUOUS, exchange, framingEcho } = framing;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(port: number, host: string, path: string, headers: Record<string, string> = {}, agent?: Agent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, ...headers }, agent }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A tiny app answering its name and what it was sent. */
async function app(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => res.end(JSON.stringify({ name, headers: req.headers })));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as { port: number }).port };
}

/** Real nginx programmed by the plane: config validation, slot switches without reloads, static trees. */
describe('nginx data plane (real nginx)', () => {
  let dir: string;
  let port: number;
  let plane: NginxPlane;
  const apps: Server[] = [];
  const fallback = createServer((_req, res) => res.writeHead(404).end('fallback'));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-nginx-plane-'));
    // As `pnpm start` makes SLIPWAY_HOME: the unprivileged workers pass through, nobody lists it.
    await chmod(dir, 0o711);
    port = await freePort();
    await new Promise<void>((ok) => fallback.listen(0, '127.0.0.1', ok));
    plane = new NginxPlane({
      bin: 'nginx',
      stateDir: join(dir, 'state'),
      listen: { host: '127.0.0.1', port },
      fallback: { host: '127.0.0.1', port: (fallback.address() as { port: number }).port },
      scheme: 'http',
      workers: 1,
      owner: 'edge',
    });
    await plane.start([]);
  });
  afterAll(async () => {
    await plane.close(2000);
    for (const server of [...apps, fallback]) server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('proxies by Host with the forwarded headers, and leaves unknown hosts to the Node edge', async () => {
    const one = await app('one');
    apps.push(one.server);
    await plane.apply([{ kind: 'proxy', id: 'one', hosts: ['one.localhost'], upstream: { host: '127.0.0.1', port: one.port } }]);
    const reply = await get(port, 'one.localhost:8080', '/x', {
      'x-forwarded-for': '203.0.113.9',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      'proxy-authorization': 'secret',
    });
    const seen = JSON.parse(reply.body) as { name: string; headers: Record<string, string> };
    expect(seen.name).toBe('one');
    expect(seen.headers).toMatchObject({
      host: 'one.localhost:8080',
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'one.localhost:8080',
    });
    for (const hop of ['keep-alive', 'te', 'proxy-authorization', 'x-slipway-client']) expect(seen.headers[hop]).toBeUndefined();
    expect(await get(port, 'nobody.localhost', '/')).toMatchObject({ status: 404, body: 'fallback' });
  });

  it('never installs a config nginx refuses: the last good one stays on disk and keeps serving', async () => {
    const one = await app('still-one');
    apps.push(one.server);
    const good: Site[] = [{ kind: 'proxy', id: 'one', hosts: ['one.localhost'], upstream: { host: '127.0.0.1', port: one.port } }];
    await plane.apply(good);
    const before = await readFile(plane.files.conf, 'utf8');
    // A name nginx cannot resolve: `nginx -t` refuses the whole file.
    const bad: Site[] = [...good, { kind: 'proxy', id: 'two', hosts: ['two.localhost'], upstream: { host: 'no-such-host.invalid', port: 80 } }];
    await expect(plane.apply(bad)).rejects.toThrow(/nginx refused the new config/);
    expect(await readFile(plane.files.conf, 'utf8')).toBe(before);
    expect(() => execFileSync('nginx', ['-t', '-q', '-c', plane.files.conf], { stdio: 'pipe' })).not.toThrow();
    expect(JSON.parse((await get(port, 'one.localhost', '/')).body).name).toBe('still-one');
  });

  it('serializes and coalesces reloads: concurrent changes all resolve, the last table wins', async () => {
    const a = await app('a');
    apps.push(a.server);
    const rounds = Array.from({ length: 6 }, (_, i) =>
      plane.apply([{ kind: 'proxy', id: 'one', hosts: [`v${i}.localhost`], upstream: { host: '127.0.0.1', port: a.port } }]),
    );
    await Promise.all(rounds);
    expect((await get(port, 'v5.localhost', '/')).status).toBe(200);
    expect((await get(port, 'v0.localhost', '/')).body).toBe('fallback');
  });

  it("a slow client never makes nginx spool an app's response to disk: the app is held back instead", async () => {
    // An app (a tenant's) that would send 64 MiB as fast as it is taken.
    const total = 64 * 1024 * 1024;
    let accepted = 0;
    const big = createServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 120);
      while (accepted < total && !res.destroyed) {
        accepted += chunk.length;
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    });
    await new Promise<void>((ok) => big.listen(0, '127.0.0.1', ok));
    apps.push(big);
    await plane.apply([
      { kind: 'proxy', id: 'big', hosts: ['big.localhost'], upstream: { host: '127.0.0.1', port: (big.address() as { port: number }).port } },
    ]);
    // A client that reads the first bytes, then stops reading for 2 s.
    const socket = await new Promise<Socket>((ok, fail) => {
      const s = connect(port, '127.0.0.1', () => ok(s)).once('error', fail);
    });
    socket.write('GET / HTTP/1.1\r\nHost: big.localhost\r\n\r\n');
    await new Promise((r) => socket.once('data', r));
    socket.pause();
    await new Promise((r) => setTimeout(r, 2000));
    const heldBack = accepted;
    socket.destroy();
    // Kernel socket buffers and nginx's memory buffers hold a few MiB; a spill to a temp file takes it all.
    expect(heldBack).toBeLessThan(total / 2);
  });

  it('swaps between slots by a marker file: no reload, no failed request under a keep-alive loop', async () => {
    const [v1, v2] = [await app('v1'), await app('v2')];
    apps.push(v1.server, v2.server);
    const marker = join(dir, 'slot-b');
    const site: Site[] = [
      {
        kind: 'proxy',
        id: 'swap',
        hosts: ['swap.localhost'],
        upstream: { host: '127.0.0.1', port: v1.port },
        alternate: { upstream: { host: '127.0.0.1', port: v2.port }, whenFileExists: marker },
      },
    ];
    await plane.apply(site);
    const master = Number((await readFile(join(dir, 'state', 'nginx.pid'), 'utf8')).trim());
    const workers = (await workersOf(master)).map((w) => w.pid);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const seen = new Set<string>();
    const failed: string[] = [];
    let stop = false;
    const loop = async () => {
      while (!stop) {
        await get(port, 'swap.localhost', '/', {}, agent).then(
          (r) => seen.add((JSON.parse(r.body) as { name: string }).name),
          (e: Error) => failed.push(e.message),
        );
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    await new Promise((r) => setTimeout(r, 200));
    await writeFile(marker, '');
    // The same text again: no reload.
    expect((await plane.apply(site)).oldWorkers).toEqual([]);
    await new Promise((r) => setTimeout(r, SLOT_SWITCH_MS + 300));
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    expect(failed).toEqual([]);
    expect([...seen].sort()).toEqual(['v1', 'v2']);
    expect(JSON.parse((await get(port, 'swap.localhost', '/')).body).name).toBe('v2');
    expect((await workersOf(master)).map((w) => w.pid)).toEqual(workers);
  });

  it('serves a static tree: forms by Accept-Encoding, a user x.gz never as an encoding, nothing outside the release', async () => {
    const release = join(dir, 'release');
    await mkdir(join(release, '.slipway-precompressed'), { recursive: true });
    const text = 'let x = 1;\n'.repeat(200);
    await writeFile(join(release, 'app.js'), text);
    await writeFile(join(release, '.slipway-precompressed', 'app.js.gz'), gzipSync(text));
    await writeFile(join(release, '.slipway-precompressed', 'app.js.br'), brotliCompressSync(text));
    await writeFile(join(release, 'data'), 'plain data');
    await writeFile(join(release, 'data.gz'), 'the user own data.gz');
    await writeFile(join(release, 'index.html'), '<h1>home</h1>');
    await writeFile(join(release, '.env'), 'SECRET=1');
    await symlink('/etc/passwd', join(release, 'passwd'));
    await symlink('app.js', join(release, 'alias.js'));
    const tree = (await materializeStaticTree(release, join(dir, 'trees'), 'r1'))!;
    await plane.apply([
      { kind: 'static', id: 'site', hosts: ['site.localhost'], root: tree.root, ownCompressedRoot: tree.ownCompressedRoot, spaFallback: false },
    ]);
    const gz = await get(port, 'site.localhost', '/app.js', { 'accept-encoding': 'gzip' });
    expect({ coding: gz.headers['content-encoding'], vary: gz.headers['vary'] }).toEqual({ coding: 'gzip', vary: 'Accept-Encoding' });
    // Brotli preferred when accepted.
    const br = await get(port, 'site.localhost', '/app.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(Buffer.from(br.body, 'latin1')).toString()).toBe(text);
    expect((await get(port, 'site.localhost', '/alias.js')).body).toBe(text);
    expect((await get(port, 'site.localhost', '/data', { 'accept-encoding': 'gzip' })).body).toBe('plain data');
    expect((await get(port, 'site.localhost', '/data.gz')).body).toBe('the user own data.gz');
    for (const path of ['/app.js.gz', '/.slipway-precompressed/app.js.gz', '/passwd', '/.env', '/%2e/app.js', '/a%0ab', '/%5capp.js']) {
      expect({ path, status: (await get(port, 'site.localhost', path)).status }).toEqual({ path, status: 404 });
    }
    expect((await get(port, 'site.localhost', '/', { accept: 'text/html' })).headers['cache-control']).toBe('no-cache');
  });
  it('forwards request bodies exactly as received, chunked or not, however many packets they come in', async () => {
    const echo = await framingEcho();
    apps.push(echo.server);
    const release = join(dir, 'release-framing');
    await mkdir(release, { recursive: true });
    await writeFile(join(release, 'index.html'), '<h1>static</h1>');
    const tree = (await materializeStaticTree(release, join(dir, 'trees'), 'framing'))!;
    await plane.apply([
      { kind: 'proxy', id: 'echo', hosts: ['echo.localhost'], upstream: { host: '127.0.0.1', port: echo.port } },
      { kind: 'static', id: 'stat', hosts: ['stat.localhost'], root: tree.root, ownCompressedRoot: tree.ownCompressedRoot, spaFallback: false },
    ]);
    const body = Buffer.alloc(48 * 1024, 'b');
    const pieces = [body.subarray(0, 9000), body.subarray(9000, 30000), body.subarray(30000)];
    const head = (host: string, method: string, framing: string, path = '/upload') => `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${framing}\r\n`;
    const chunked = [
      head('echo.localhost', 'POST', 'Transfer-Encoding: chunked\r\n'),
      ...pieces.map((p) => Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')])),
      '0\r\n\r\n',
      AFTER('echo.localhost'),
    ];
    const replies = await exchange(port, chunked, 150);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(replies[0]!.body)).toMatchObject({ url: '/upload', bytes: body.length, te: 'chunked' });
    expect(JSON.parse(replies[1]!.body)).toMatchObject({ url: '/after', bytes: 0 });
    const sized = [head('echo.localhost', 'POST', `Content-Length: ${body.length}\r\n`), ...pieces, AFTER('echo.localhost')];
    const sizedReplies = await exchange(port, sized, 150);
    expect(sizedReplies.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(sizedReplies[0]!.body)).toMatchObject({ bytes: body.length, cl: String(body.length) });
    // A static release reads the body to its end too (405 for a POST, 200 for a GET with a body): the next request on the connection is the client's next request.
    for (const method of ['POST', 'GET']) {
      const toStatic = [head('stat.localhost', method, 'Transfer-Encoding: chunked\r\n', '/'), ...chunked.slice(1, -1), AFTER('stat.localhost')];
      expect({ method, statuses: (await exchange(port, toStatic, 150)).map((r) => r.status) }).toEqual({
        method,
        statuses: [method === 'POST' ? 405 : 200, 404],
      });
    }
    expect(echo.errors).toEqual([]);
  });

  it('refuses requests whose framing is ambiguous before they reach an app', async () => {
    const echo = await framingEcho();
    apps.push(echo.server);
    await plane.apply([{ kind: 'proxy', id: 'echo', hosts: ['echo.localhost'], upstream: { host: '127.0.0.1', port: echo.port } }]);
    const answers: Record<string, number> = {};
    for (const [name, request] of Object.entries(AMBIGUOUS('echo.localhost'))) {
      answers[name] = (await exchange(port, [request], 0))[0]?.status ?? 0;
    }
    const expected = Object.fromEntries(Object.keys(answers).map((name) => [name, name.startsWith('unknown coding') ? 501 : 400]));
    expect(answers).toEqual(expected);
    expect(echo.seen.filter((r) => r.url.startsWith('/ambiguous'))).toEqual([]);
  });

  it('runs its workers unprivileged when the edge is root', async () => {
    if (process.getuid?.() !== 0) return;
    const master = Number((await readFile(join(dir, 'state', 'nginx.pid'), 'utf8')).trim());
    const workers = await workersOf(master);
    expect(workers.length).toBeGreaterThan(0);
    for (const { pid } of workers) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      // Real, effective, saved and file-system uid and gid: none of them root, no capability left.
      const ids = [/^Uid:\s+(.*)$/m, /^Gid:\s+(.*)$/m].flatMap((line) => line.exec(status)![1]!.trim().split(/\s+/).map(Number));
      expect({ pid, rootIds: ids.filter((id) => id === 0).length, capEff: /^CapEff:\s+(\w+)/m.exec(status)![1] }).toEqual({
        pid,
        rootIds: 0,
        capEff: '0000000000000000',
      });
    }
  });
});
