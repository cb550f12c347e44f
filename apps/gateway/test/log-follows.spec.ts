import { randomUUID } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@slipway/testing';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

/** The cap under test (LOG_FOLLOWS_PER_APPLICATION; the default is 20). */
const CAP = 2;
/** Every wait of this file is bounded by this. */
const WAIT_MS = 10_000;

/** An open (or refused) server-sent events follow, seen by a plain node:http client. */
interface Follow {
  status: number;
  headers: IncomingHttpHeaders;
  /** The whole body of a refusal, parsed; undefined for an open stream. */
  json: any;
  /** What the stream has sent so far. */
  text(): string;
  /** Resolves once the stream has sent `needle` (within WAIT_MS). */
  received(needle: string): Promise<void>;
  /** The client goes away (resolves when its socket has closed). */
  close(): Promise<void>;
}

/**
 * GETs an SSE route with a project API key, on its own connection. An answer of 200 resolves once
 * the stream's first event arrived (the stream is open); any other status once its body ended.
 */
function follow(url: string, key: string, opened: Set<Follow>): Promise<Follow> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, agent: false });
    const timer = setTimeout(() => (req.destroy(), reject(new Error(`GET ${url}: no answer within ${WAIT_MS} ms`))), WAIT_MS);
    const socketClosed = new Promise<void>((r) => req.once('close', () => r()));
    let body = '';
    let isOpen = false;
    const waiters = new Set<() => void>();
    req.on('error', (error) => (clearTimeout(timer), reject(error)));
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('error', () => undefined);
      const handle: Follow = {
        status: res.statusCode!,
        headers: res.headers,
        json: undefined,
        text: () => body,
        received: (needle) =>
          new Promise<void>((ok, fail) => {
            if (body.includes(needle)) return ok();
            const deadline = setTimeout(
              () => (waiters.delete(check), fail(new Error(`${needle} not received within ${WAIT_MS} ms; got ${JSON.stringify(body)}`))),
              WAIT_MS,
            );
            const check = () => {
              if (!body.includes(needle)) return;
              clearTimeout(deadline);
              waiters.delete(check);
              ok();
            };
            waiters.add(check);
          }),
        close: async () => {
          opened.delete(handle);
          req.destroy();
          await socketClosed;
        },
      };
      res.on('data', (chunk: string) => {
        body += chunk;
        for (const check of [...waiters]) check();
        if (res.statusCode !== 200 || isOpen || !body.includes('\n\n')) return;
        isOpen = true;
        clearTimeout(timer);
        opened.add(handle);
        resolve(handle);
      });
      res.on('end', () => {
        if (res.statusCode === 200) return;
        clearTimeout(timer);
        handle.json = JSON.parse(body);
        resolve(handle);
      });
    });
    req.end();
  });
}

/**
 * LOG_FOLLOWS_PER_APPLICATION: the runtime-log tail and the live build output of one application
 * share a cap of open follows per gateway process; one more is answered 429 rate_limited (the
 * platform's error shape, before any stream opens) and a closed follow's slot is taken again.
 * Real HTTP against the whole gateway (Postgres, Redis); the edge's internal log API is a stand-in
 * that answers a follow with one NDJSON line and holds it open (or fails it for one application).
 */
describe('log follows per application (real HTTP, Postgres, Redis, a stand-in edge)', () => {
  let gw: GatewayUnderTest;
  let edge: Server;
  /** Follows the gateway asked the stand-in edge for, and those it holds open now. */
  const edgeAsked: string[] = [];
  const edgeOpen = new Set<ServerResponse>();
  /** Applications whose runtime-log follow the stand-in edge fails (the gateway answers 503). */
  const edgeFails = new Set<string>();
  /** Every follow a test opened, closed in afterEach whatever failed. */
  const opened = new Set<Follow>();

  beforeAll(async () => {
    edge = createServer((req, res) => {
      const match = /^\/_slipway\/applications\/([^/]+)\/logs\/follow\?/.exec(req.url ?? '');
      if (!match) return res.writeHead(404).end();
      edgeAsked.push(match[1]!);
      if (edgeFails.has(match[1]!)) return res.writeHead(500).end();
      edgeOpen.add(res);
      res.once('close', () => edgeOpen.delete(res));
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ time: new Date().toISOString(), stream: 'stdout', text: `hello ${match[1]}`, releaseId: randomUUID() })}\n`);
    });
    await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
    gw = await startGateway('log-follows', {
      LOG_FOLLOWS_PER_APPLICATION: String(CAP),
      EDGE_INTERNAL_URL: `http://127.0.0.1:${(edge.address() as AddressInfo).port}`,
    });
  });
  afterEach(async () => {
    await Promise.all([...opened].map((f) => f.close()));
  });
  afterAll(async () => {
    await gw?.close();
    edge?.closeAllConnections();
    await new Promise<void>((resolve) => (edge ? edge.close(() => resolve()) : resolve()));
  });

  const runtime = (app: TestApplication) => follow(`${gw.url}/dashboard/api/applications/${app.id}/logs/stream`, app.key, opened);
  const build = (app: TestApplication, deploymentId: string) =>
    follow(`${gw.url}/dashboard/api/applications/${app.id}/deployments/${deploymentId}/log/stream`, app.key, opened);
  const building = async (app: TestApplication) =>
    (await gw.sql.query<{ id: string }>(`INSERT INTO deployments (application_id, status) VALUES ($1, 'building') RETURNING id`, [app.id])).rows[0]!.id;

  const expectRefused = (res: Follow) => {
    expect([res.status, res.headers['retry-after'], res.headers['content-type']]).toEqual([429, '5', expect.stringContaining('application/json')]);
    expect(res.json).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 5, documentation: expect.stringContaining('#error-rate_limited') });
    expect(res.json.error).toContain(`LOG_FOLLOWS_PER_APPLICATION=${CAP}`);
  };
  const expectOpen = (res: Follow) => expect([res.status, res.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);

  /** A follow tried until it is accepted (the gateway sees the client gone a moment after it went), bounded. */
  const acceptedWithin = (open: () => Promise<Follow>) =>
    waitFor(
      async () => {
        const res = await open();
        if (res.status === 200) return res;
        expectRefused(res);
        return undefined;
      },
      { timeoutMs: WAIT_MS, intervalMs: 50, what: 'a follow accepted again after one closed' },
    );

  it(`opens ${CAP} runtime-log follows, answers the next 429 rate_limited before asking the edge, and accepts one again once a follow closed`, async () => {
    const shop = await gw.createApplication('shop');
    const follows = [];
    for (let i = 0; i < CAP; i++) follows.push(await runtime(shop));
    for (const f of follows) {
      expectOpen(f);
      await f.received(`hello ${shop.id}`);
    }
    const askedBefore = edgeAsked.length;

    const refused = await runtime(shop);
    expectRefused(refused);
    // Refused before the stream opened: the edge was never asked.
    expect(edgeAsked.length).toBe(askedBefore);
    // The build output of the same application counts against the same cap.
    expectRefused(await build(shop, await building(shop)));

    // Another application has its own follows.
    const blog = await gw.createApplication('blog');
    const other = await runtime(blog);
    expectOpen(other);

    await follows[0]!.close();
    // The gateway let go of the edge's follow too.
    await waitFor(() => edgeOpen.size === CAP, { timeoutMs: WAIT_MS, what: "the closed follow's edge request to end" });
    const again = await acceptedWithin(() => runtime(shop));
    expectOpen(again);
    await again.received(`hello ${shop.id}`);
    expectRefused(await runtime(shop));
  });

  it('counts build-output follows too, and a follow that fails before its stream opens gives its slot back', async () => {
    const api = await gw.createApplication('api');
    // The edge fails this application's follows: 503, CAP + 2 times, and no slot is kept by any of them.
    edgeFails.add(api.id);
    for (let i = 0; i < CAP + 2; i++) expect((await runtime(api)).json).toMatchObject({ code: 'unavailable' });
    // An unknown deployment: 404, no slot kept either.
    for (let i = 0; i < CAP + 2; i++) expect((await build(api, randomUUID())).json).toMatchObject({ code: 'not_found' });
    edgeFails.delete(api.id);

    const deployment = await building(api);
    const follows = [];
    for (let i = 0; i < CAP; i++) follows.push(await build(api, deployment));
    for (const f of follows) expectOpen(f);
    expectRefused(await build(api, deployment));
    expectRefused(await runtime(api));

    await follows[1]!.close();
    expectOpen(await acceptedWithin(() => runtime(api)));
    expectRefused(await build(api, deployment));
  });

  it("lists the 429 of both streams in the owners' API document", async () => {
    const response = await fetch(`${gw.url}/dashboard/api/openapi.json`, { signal: AbortSignal.timeout(WAIT_MS) });
    const document = (await response.json()) as { paths: Record<string, { get: { responses: Record<string, unknown> } }> };
    for (const path of ['/dashboard/api/applications/{appId}/logs/stream', '/dashboard/api/applications/{appId}/deployments/{deploymentId}/log/stream']) {
      expect(document.paths[path]!.get.responses['429']).toMatchObject({ description: 'Error: rate_limited' });
    }
  });
});
