import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { ReverseProxy, type Upstream } from './proxy.js';

// The proxy between two real HTTP servers on loopback: a client → edge (ReverseProxy) → app.

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  headers: IncomingMessage['headers'];
  body: string;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function call(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; setHost?: boolean } = {},
): Promise<{ status: number; rawHeaders: string[]; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers, setHost: options.setHost ?? true },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('ReverseProxy (real client, edge and app servers)', () => {
  let app: Server;
  let edge: Server;
  let appPort: number;
  let edgePort: number;
  let seen: Seen[];
  let inflight: number;
  let proxy: ReverseProxy;
  let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  const upstream = (port: () => number): Upstream => ({
    host: '127.0.0.1',
    get port() {
      return port();
    },
    enter: () => void (inflight += 1),
    leave: () => void (inflight -= 1),
  });

  beforeEach(async () => {
    seen = [];
    inflight = 0;
    handler = (_req, res) => res.end('ok');
    app = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, headers: req.headers, body });
        handler(req, res, body);
      });
    });
    appPort = await listen(app);
    proxy = new ReverseProxy('https');
    const toApp = upstream(() => appPort);
    const toNowhere = upstream(() => 1); // nothing listens on port 1
    edge = createServer((req, res) => proxy.forward(req, res, req.url!.startsWith('/down') ? toNowhere : toApp));
    edge.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => proxy.upgrade(req, socket, head, toApp));
    edgePort = await listen(edge);
  });

  afterEach(async () => {
    await proxy.close();
    edge.closeAllConnections();
    app.closeAllConnections();
    await new Promise((r) => edge.close(r));
    await new Promise((r) => app.close(r));
  });

  it('passes method, path, body and end-to-end headers; drops hop-by-hop ones both ways; adds X-Forwarded-*', async () => {
    handler = (_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, 'Made Here', { 'x-app': 'yes', connection: 'keep-alive', 'keep-alive': 'timeout=77', 'proxy-authorization': 'secret' });
      res.end('created');
    };
    const response = await call(edgePort, {
      method: 'POST',
      path: '/submit?x=1&y=%2F',
      body: 'hello body',
      headers: {
        host: 'shop.example.com',
        'content-type': 'text/plain',
        'x-custom': 'kept',
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'forged',
        'x-forwarded-host': 'forged.example',
        connection: 'keep-alive, x-private',
        'x-private': 'dropped',
        'proxy-authorization': 'Basic c2VjcmV0',
        te: 'trailers',
      },
    });
    expect(response.status).toBe(201);
    expect(response.body.toString()).toBe('created');
    expect(response.headers['x-app']).toBe('yes');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(response.headers['proxy-authorization']).toBeUndefined();
    expect(response.headers['keep-alive']).not.toBe('timeout=77'); // the edge's own keep-alive, not the app's
    const [got] = seen;
    expect(got).toMatchObject({ method: 'POST', url: '/submit?x=1&y=%2F', body: 'hello body' });
    expect(got!.headers).toMatchObject({
      host: 'shop.example.com',
      'content-type': 'text/plain',
      'x-custom': 'kept',
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'shop.example.com',
    });
    expect(got!.headers['x-private']).toBeUndefined();
    expect(got!.headers['proxy-authorization']).toBeUndefined();
    expect(got!.headers.te).toBeUndefined();
    expect(inflight).toBe(0);
  });

  it('takes the client address from X-Slipway-Client only behind nginx, and never passes that header on', async () => {
    // Not behind nginx (EDGE_DATA_PLANE=node): the header is anyone's, dropped, the socket's address used.
    await call(edgePort, { headers: { 'x-slipway-client': '198.51.100.7' } });
    expect(seen[0]!.headers).toMatchObject({ 'x-forwarded-for': '127.0.0.1' });
    expect(seen[0]!.headers['x-slipway-client']).toBeUndefined();
    // Behind nginx (the fallback path, from the loopback): nginx's client address is the one appended.
    const behind = new ReverseProxy('https', true);
    const edge2 = createServer((req, res) =>
      behind.forward(
        req,
        res,
        upstream(() => appPort),
      ),
    );
    const port2 = await listen(edge2);
    await call(port2, { headers: { 'x-slipway-client': '198.51.100.7', 'x-forwarded-for': '203.0.113.1' } });
    expect(seen[1]!.headers).toMatchObject({ 'x-forwarded-for': '203.0.113.1, 198.51.100.7' });
    expect(seen[1]!.headers['x-slipway-client']).toBeUndefined();
    await behind.close();
    edge2.closeAllConnections();
    await new Promise((r) => edge2.close(r));
  });

  it('forwards one Host (the first, which routing used) and keeps repeated headers apart', async () => {
    // node:http sends the headers exactly as given: a second Host line reaches the edge.
    await call(edgePort, { headers: { host: 'first.example', 'x-multi': ['one', 'two'] }, path: '/dup' });
    // node:http will not send two Host lines: write this request by hand.
    const twice = await new Promise<string>((resolve, reject) => {
      const socket = connect(edgePort, '127.0.0.1', () =>
        socket.write('GET /dup2 HTTP/1.1\r\nHost: first.example\r\nHost: second.example\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(twice).toMatch(/^HTTP\/1\.1 200 /);
    const [one, two] = seen;
    expect(one!.headers.host).toBe('first.example');
    expect(one!.rawHeaders.filter((_, i, all) => i % 2 === 0 && all[i]!.toLowerCase() === 'x-multi')).toHaveLength(2);
    expect(two!.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'host')).toEqual(['host']);
    expect(two!.headers.host).toBe('first.example');
  });

  it('streams request and response bodies of any size, chunked or not', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 'x');
    handler = (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(big);
      res.end(String(body.length));
    };
    const response = await new Promise<{ status: number; length: number; tail: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: edgePort, method: 'PUT', path: '/upload' }, (res) => {
        let length = 0;
        let tail = '';
        res.on('data', (c: Buffer) => {
          length += c.length;
          tail = (tail + c.toString('latin1')).slice(-16);
        });
        res.on('end', () => resolve({ status: res.statusCode!, length, tail }));
      });
      req.on('error', reject);
      req.write('a'.repeat(100_000)); // no content-length: chunked request body
      setTimeout(() => req.end('b'.repeat(100_000)), 20);
    });
    expect(response.status).toBe(200);
    expect(response.length).toBe(big.length + '200000'.length);
    expect(response.tail.endsWith('200000')).toBe(true);
    expect(seen[0]!.body).toBe('a'.repeat(100_000) + 'b'.repeat(100_000));
    expect(inflight).toBe(0);
  });

  it('answers 502 when the app does not answer, with or without a request body, and keeps the client connection usable', async () => {
    const get = await call(edgePort, { path: '/down' });
    const post = await call(edgePort, {
      method: 'POST',
      path: '/down/form',
      body: 'field=value',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    for (const response of [get, post]) {
      expect(response.status).toBe(502);
      expect(response.body.toString()).toBe('Bad Gateway: the application is not answering\n');
    }
    expect((await call(edgePort, { path: '/after' })).status).toBe(200);
    expect(inflight).toBe(0);
  });

  it('counts an exchange the client abandons as finished and stops the upstream request', async () => {
    let appSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (appSawClose = resolve));
    handler = (req, res) => {
      res.writeHead(200);
      res.write('first');
      res.on('close', () => appSawClose());
    };
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port: edgePort, path: '/slow' }, (res) =>
        res.once('data', () => {
          req.destroy();
          resolve();
        }),
      );
      req.on('error', () => undefined);
      req.end();
    });
    await closed;
    expect(inflight).toBe(0);
  });

  it('pipes websocket upgrades both ways with X-Forwarded-* added', async () => {
    app.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, headers: req.headers, body: '' });
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
      socket.on('data', (d: Buffer) => socket.write(`echo:${d.toString()}`));
      socket.on('end', () => socket.end());
    });
    const reply = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: edgePort, path: '/ws', headers: { connection: 'Upgrade', upgrade: 'test', host: 'app.example' } });
      req.on('upgrade', (_res, socket: Socket) => {
        socket.once('data', (d: Buffer) => {
          resolve(d.toString());
          socket.destroy();
        });
        socket.write('ping');
      });
      req.on('error', reject);
      req.end();
    });
    expect(reply).toBe('echo:ping');
    expect(seen[0]!.headers).toMatchObject({
      upgrade: 'test',
      connection: 'Upgrade',
      host: 'app.example',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'app.example',
    });
  });

  it('follows the upstream it is given per request, and forget() closes the connections to a stopped one', async () => {
    const other = createServer((_req, res) => res.end('other'));
    const otherPort = await listen(other);
    let connections = 0;
    other.on('connection', () => (connections += 1));
    const target = { host: '127.0.0.1', port: otherPort, enter: () => undefined, leave: () => undefined };
    const viaEdge = createServer((req, res) => proxy.forward(req, res, target));
    const viaPort = await listen(viaEdge);
    expect((await call(viaPort)).body.toString()).toBe('other');
    expect((await call(viaPort)).body.toString()).toBe('other');
    expect(connections).toBe(1); // kept alive and reused
    proxy.forget('127.0.0.1', otherPort);
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(viaPort)).body.toString()).toBe('other');
    expect(connections).toBe(2); // a fresh pool after forget
    viaEdge.closeAllConnections();
    other.closeAllConnections();
    await new Promise((r) => viaEdge.close(r));
    await new Promise((r) => other.close(r));
  });
});
