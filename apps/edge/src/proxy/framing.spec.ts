import { createServer, type Server } from 'node:http';
import { framing } from '@slipway/testing';
import { ReverseProxy, type Upstream } from './proxy.js';
import { EDGE_HTTP_OPTIONS, framingRefusal, refusalHead } from './framing.js';

const { AFTER, AMBIGUOUS, exchange, framingEcho } = framing;

/**
 * The Node data plane (EDGE_DATA_PLANE=node, and the fallback behind nginx) as the edge runs it:
 * a node:http server with the edge's options, refusing what framingRefusal refuses, forwarding
 * the rest with the ReverseProxy to a real app.
 */
describe('request framing at the Node edge (real parser, proxy and app)', () => {
  let edge: Server;
  let port: number;
  let echo: Awaited<ReturnType<typeof framingEcho>>;
  const proxy = new ReverseProxy('http');

  beforeAll(async () => {
    echo = await framingEcho();
    const upstream: Upstream = { host: '127.0.0.1', port: echo.port, enter: () => undefined, leave: () => undefined };
    edge = createServer(EDGE_HTTP_OPTIONS, (req, res) => {
      const refusal = framingRefusal(req);
      if (refusal) return void res.writeHead(refusal.status, refusalHead(refusal)).end(refusal.message);
      proxy.forward(req, res, upstream);
    });
    await new Promise<void>((ok) => edge.listen(0, '127.0.0.1', ok));
    port = (edge.address() as { port: number }).port;
  });
  afterAll(async () => {
    await proxy.close();
    edge.close();
    echo.server.close();
  });

  it('forwards a body that comes in several packets whole, chunked or with Content-Length, and the connection stays in step', async () => {
    const body = Buffer.alloc(40 * 1024, 'n');
    const pieces = [body.subarray(0, 7000), body.subarray(7000, 25000), body.subarray(25000)];
    const chunked = [
      'POST /upload HTTP/1.1\r\nHost: echo.localhost\r\nTransfer-Encoding: chunked\r\n\r\n',
      ...pieces.map((p) => Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')])),
      '0\r\n\r\n',
      AFTER('echo.localhost'),
    ];
    const replies = await exchange(port, chunked, 150);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(replies[0]!.body)).toMatchObject({ url: '/upload', bytes: body.length, te: 'chunked' });
    const sized = [`POST /upload HTTP/1.1\r\nHost: echo.localhost\r\nContent-Length: ${body.length}\r\n\r\n`, ...pieces, AFTER('echo.localhost')];
    const sizedReplies = await exchange(port, sized, 150);
    expect(sizedReplies.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(sizedReplies[0]!.body)).toMatchObject({ bytes: body.length, cl: String(body.length) });
  });

  it('refuses every ambiguous framing (400, 501 for a coding it does not know) and none reaches the app', async () => {
    const answers: Record<string, number> = {};
    for (const [name, request] of Object.entries(AMBIGUOUS('echo.localhost'))) answers[name] = (await exchange(port, [request], 0))[0]?.status ?? 0;
    const expected = Object.fromEntries(Object.keys(answers).map((name) => [name, name.startsWith('unknown coding (gzip') ? 501 : 400]));
    expect(answers).toEqual(expected);
    expect(echo.seen.filter((r) => r.url.startsWith('/ambiguous'))).toEqual([]);
  });

  it('refuses a bare LF as a line end, in the head and in the chunks', async () => {
    const requests = {
      'request line and fields': 'POST /ambiguous/lf HTTP/1.1\nHost: echo.localhost\nContent-Length: 5\nConnection: close\n\nhello',
      'one field': 'POST /ambiguous/lf-field HTTP/1.1\r\nHost: echo.localhost\r\nX-Pad: 1\nContent-Length: 5\r\nConnection: close\r\n\r\nhello',
      'chunk lines': 'POST /ambiguous/lf-chunk HTTP/1.1\r\nHost: echo.localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\nhello\n0\n\n',
    };
    const answers: Record<string, number> = {};
    for (const [name, request] of Object.entries(requests)) answers[name] = (await exchange(port, [request], 0))[0]?.status ?? 0;
    expect(answers).toEqual({ 'request line and fields': 400, 'one field': 400, 'chunk lines': 400 });
    expect(echo.seen.filter((r) => r.url.startsWith('/ambiguous'))).toEqual([]);
  });
});
