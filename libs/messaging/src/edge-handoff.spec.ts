import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EdgeHandoff } from './edge-handoff.js';
import { RELEASE_START_PATTERN, SWITCH_RELEASE_PATTERN, isEdgeInternalToken } from './edge-paths.js';

/** A stand-in edge over real HTTP: answers what the test sets, only to the internal token. */
describe('EdgeHandoff (a real HTTP edge)', () => {
  const masterKey = randomBytes(32).toString('base64');
  let server: Server;
  let edgeUrl: string;
  let answer: { status: number; body?: unknown } = { status: 200 };
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(`${req.method} ${req.url}`);
      const known = RELEASE_START_PATTERN.test(req.url ?? '') || SWITCH_RELEASE_PATTERN.test(req.url ?? '');
      const { status, body } = !isEdgeInternalToken(masterKey, req.headers.authorization)
        ? { status: 401, body: { error: 'no' } }
        : known
          ? answer
          : { status: 404, body: { error: 'not found' } };
      res.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    edgeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  const handoff = () => new EdgeHandoff({ edgeUrl, masterKey, timeoutMs: 5_000 });
  const releaseId = randomUUID();

  it('reports a healthy start with its containment and the port it was found on', async () => {
    answer = { status: 200, body: { status: 'healthy', sandbox: { status: 'on' } } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'healthy', containment: { status: 'on' } });
    expect(seen.at(-1)).toBe(`POST /_slipway/releases/${releaseId}/start`);
    answer = { status: 200, body: { status: 'healthy', sandbox: { status: 'off', reason: 'no bwrap' }, portFound: { port: 8080, envPort: 3000 } } };
    expect(await handoff().start(releaseId)).toEqual({
      kind: 'healthy',
      containment: { status: 'off', reason: 'no bwrap' },
      portFound: { port: 8080, envPort: 3000 },
    });
    answer = { status: 200, body: { sandbox: { status: 'off' }, portFound: { port: 'x' } } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'healthy', containment: { status: 'off', reason: 'no reason given' } });
  });

  it('names each failed start', async () => {
    answer = { status: 404, body: { error: 'no such release' } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'not_found', status: 404, error: 'no such release' });
    answer = { status: 422, body: { error: 'exited with 1', logTail: 'boom' } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'unhealthy', status: 422, error: 'exited with 1', logTail: 'boom' });
    answer = { status: 422 };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'unhealthy', status: 422 });
    answer = { status: 503, body: { code: 'sandbox_unavailable', error: 'no user namespaces' } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'sandbox_unavailable', status: 503, error: 'no user namespaces' });
    answer = { status: 503, body: { error: 'draining' } };
    expect(await handoff().start(releaseId)).toEqual({ kind: 'refused', status: 503, error: 'draining' });
    expect(await new EdgeHandoff({ edgeUrl, masterKey: randomBytes(32).toString('base64'), timeoutMs: 5_000 }).start(releaseId)).toEqual({
      kind: 'refused',
      status: 401,
      error: 'no',
    });
  });

  it('reports an edge that does not answer, never throwing', async () => {
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((ok) => closed.close(ok));
    const away = new EdgeHandoff({ edgeUrl: url, masterKey, timeoutMs: 5_000 });
    expect(await away.start(releaseId)).toMatchObject({ kind: 'unreachable', message: expect.any(String) });
    expect(await away.switchTo(randomUUID(), releaseId)).toMatchObject({ switched: false, message: expect.any(String) });
  });

  it('reports whether the edge switched', async () => {
    const applicationId = randomUUID();
    answer = { status: 200, body: { releaseId } };
    expect(await handoff().switchTo(applicationId, releaseId)).toEqual({ switched: true });
    expect(seen.at(-1)).toBe(`POST /_slipway/applications/${applicationId}/switch/${releaseId}`);
    answer = { status: 404, body: { error: 'no such release of this application' } };
    expect(await handoff().switchTo(applicationId, releaseId)).toEqual({ switched: false, status: 404 });
  });
});
