import { createTestDatabase, serviceTestEnv, testRedisPrefix, type TestDatabase } from '@slipway/testing';
import { loadEdgeConfig } from './config.js';
import { EdgeServer } from './edge-server.js';

describe('edge health and unknown hosts (real Postgres and Redis)', () => {
  let db: TestDatabase;
  let edge: EdgeServer | undefined;
  const redis = testRedisPrefix('edge-health');
  beforeAll(async () => {
    db = await createTestDatabase('edge');
  });
  afterEach(async () => {
    await edge?.close();
    edge = undefined;
  });
  afterAll(async () => {
    await db.drop();
    await redis.cleanup();
  });

  it('is live and ready when Postgres and Redis answer; an unknown host gets a plain 404 page', async () => {
    edge = await EdgeServer.start(loadEdgeConfig(serviceTestEnv(db.url, { QUEUE_PREFIX: redis.prefix, LOG_LEVEL: 'warn' })));
    const base = `http://127.0.0.1:${edge.port}`;
    const live = await fetch(`${base}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok', service: 'edge' });
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { postgres: { status: 'up' }, redis: { status: 'up' } } });
    const unknown = await fetch(`${base}/`, { headers: { host: 'nobody.localhost:8080' } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await unknown.text()).toContain('There is no application at this address.');
  });

  it('refuses the internal hand-off without the token', async () => {
    edge = await EdgeServer.start(loadEdgeConfig(serviceTestEnv(db.url, { QUEUE_PREFIX: redis.prefix, LOG_LEVEL: 'warn' })));
    const response = await fetch(`http://127.0.0.1:${edge.port}/_slipway/releases/0b9f7c1e-6a43-4b8e-9d4e-2f5a3c1d7e90/start`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(response.status).toBe(401);
  });
});
