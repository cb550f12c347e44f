/**
 * The worker's hand-off to a real EdgeServer in this process (the Node plane, the local driver
 * unsandboxed, real Postgres and Redis): a start or a switch reads the release's route once, and
 * a Node release's environment once when it starts, counted through the repositories (issue 35:
 * it read the release three or four times per switch).
 */
import { jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { EdgeHandoff } from '@slipway/messaging';
import { ApplicationInputs, LiveRoutes, openPlatformData, type PlatformData } from '@slipway/platform-data';
import { createTestDatabase, freePort, tarGzOf, type TestDatabase } from '@slipway/testing';
import { loadEdgeConfig } from './config.js';
import { EdgeServer } from './edge-server.js';

const SERVER = `require('node:http').createServer((req, res) => res.end('node app')).listen(Number(process.env.PORT));`;

describe('EdgeServer: one read of the release per hand-off (real Postgres, Redis, Node releases)', () => {
  const reads = {
    routes: jest.spyOn(LiveRoutes.prototype, 'routes'),
    routeTo: jest.spyOn(LiveRoutes.prototype, 'routeTo'),
    release: jest.spyOn(LiveRoutes.prototype, 'release'),
    environment: jest.spyOn(ApplicationInputs.prototype, 'forRuntime'),
  };
  /** The reads since the last call, by repository method. */
  const readsSince = () => {
    const counts = Object.fromEntries(Object.entries(reads).map(([name, spy]) => [name, spy.mock.calls.length]));
    for (const spy of Object.values(reads)) spy.mockClear();
    return counts;
  };
  let db: TestDatabase;
  let data: PlatformData;
  let home: string;
  let edge: EdgeServer | undefined;
  let handoff: EdgeHandoff;
  let applicationId: string;
  let port: number;
  const masterKey = randomBytes(32).toString('base64');

  /** A release of the application (a deployment of its own), its artifact in the edge's blob store. */
  async function release(kind: 'node' | 'static', files: Record<string, string>, spec: Record<string, unknown> = {}): Promise<string> {
    const sql = data.infrastructure.pool;
    const deployment = (await sql.query(`INSERT INTO deployments (application_id, status, steps) VALUES ($1, 'succeeded', '[]') RETURNING id`, [applicationId]))
      .rows[0].id;
    const id = randomUUID();
    const artifactKey = `releases/${id}.tar.gz`;
    const archive = await tarGzOf(Object.entries(files).map(([name, content]) => ({ name, content: Buffer.from(content) })));
    await data.infrastructure.blobs.put(artifactKey, Readable.from([archive]));
    await sql.query(`INSERT INTO releases (id, application_id, deployment_id, kind, artifact_key, spec) VALUES ($1, $2, $3, $4, $5, $6)`, [
      id,
      applicationId,
      deployment,
      kind,
      artifactKey,
      JSON.stringify(spec),
    ]);
    return id;
  }
  const nodeRelease = () =>
    release('node', { 'server.js': SERVER, 'package.json': '{"name":"reads","private":true}' }, { commands: { start: 'node server.js' } });
  /** What the application answers at its address (fetch cannot set Host). */
  const answer = () =>
    new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', headers: { host: `reads.localhost:${port}` } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });

  beforeAll(async () => {
    db = await createTestDatabase('edgereads');
    home = await mkdtemp(join(tmpdir(), 'slipway-edge-reads-'));
    port = await freePort();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      SLIPWAY_MASTER_KEY: masterKey,
      SLIPWAY_HOME: home,
      BLOB_DIR: join(home, 'blobs'),
      HOST: '127.0.0.1',
      PORT: String(port),
      APPS_DOMAIN: `localhost:${port}`,
      QUEUE_PREFIX: `edge-reads-${randomBytes(4).toString('hex')}`,
      EDGE_METRICS: 'off',
      RUNTIME_SANDBOX: 'off',
      HEALTH_TIMEOUT_MS: '15000',
      DRAIN_GRACE_MS: '200',
    };
    data = openPlatformData(env, { poolSize: 2, blobs: true });
    const sql = data.infrastructure.pool;
    const owner = (await sql.query(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`${randomUUID()}@example.com`])).rows[0].id;
    applicationId = (await sql.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'reads', 'reads') RETURNING id`, [owner])).rows[0].id;
    edge = await EdgeServer.start(loadEdgeConfig(env));
    handoff = new EdgeHandoff({ edgeUrl: `http://127.0.0.1:${port}`, masterKey, timeoutMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await edge?.close();
    await data?.close();
    await db?.drop();
    await rm(home, { recursive: true, force: true });
    for (const spy of Object.values(reads)) spy.mockRestore();
  });

  it('a Node release: the start reads its route and its environment once, the switch its route once', async () => {
    const id = await nodeRelease();
    readsSince();
    expect(await handoff.start(id)).toMatchObject({ kind: 'healthy' });
    expect(readsSince()).toEqual({ routes: 0, routeTo: 1, release: 0, environment: 1 });
    expect(await handoff.switchTo(applicationId, id)).toEqual({ switched: true });
    expect(readsSince()).toEqual({ routes: 0, routeTo: 1, release: 0, environment: 0 });
    expect(await answer()).toBe('node app');
  }, 60_000);

  it('a Node release switched to without a start (a rollback): its route once, its environment once', async () => {
    const id = await nodeRelease();
    readsSince();
    expect(await handoff.switchTo(applicationId, id)).toEqual({ switched: true });
    expect(readsSince()).toEqual({ routes: 0, routeTo: 1, release: 0, environment: 1 });
  }, 60_000);

  it('a static release: the start and the switch read its route once each, and no environment', async () => {
    const id = await release('static', { 'index.html': 'static one' });
    readsSince();
    expect(await handoff.start(id)).toMatchObject({ kind: 'healthy' });
    expect(await handoff.switchTo(applicationId, id)).toEqual({ switched: true });
    expect(readsSince()).toEqual({ routes: 0, routeTo: 2, release: 0, environment: 0 });
    expect(await answer()).toBe('static one');
  }, 60_000);
});
