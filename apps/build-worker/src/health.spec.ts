import { createTestDatabase, serviceTestEnv, startServiceForTest, type ServiceUnderTest, type TestDatabase } from '@slipway/testing';
import { AppModule } from './app.module.js';
import { loadWorkerConfig } from './config.js';

describe('build-worker health (real Postgres and Redis)', () => {
  let db: TestDatabase;
  let service: ServiceUnderTest | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('worker');
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });
  afterAll(async () => {
    await db.drop();
  });

  it('is live and ready when Postgres and Redis answer', async () => {
    service = await startServiceForTest('build-worker', AppModule.register(loadWorkerConfig(serviceTestEnv(db.url)), { consume: false }));
    const live = await fetch(`${service.url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok', service: 'build-worker' });
    const ready = await fetch(`${service.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { postgres: { status: 'up' }, redis: { status: 'up' } } });
  });

  it('is live but not ready when Redis does not answer, and says why', async () => {
    const config = loadWorkerConfig(serviceTestEnv(db.url, { REDIS_URL: 'redis://127.0.0.1:1' }));
    service = await startServiceForTest('build-worker', AppModule.register(config, { consume: false }));
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
    const ready = await fetch(`${service.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unavailable', checks: { postgres: { status: 'up' }, redis: { status: 'down', error: expect.any(String) } } });
  });
});
