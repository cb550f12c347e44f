import { createTestDatabase, type TestDatabase } from './test-database.js';
import { serviceTestEnv, startServiceForTest, type ServiceUnderTest } from './service.js';

/**
 * The health contract every Nest service keeps, as one shared suite: `/health/live` and
 * `/health/ready` over a real database and Redis, and a 503 naming the dependency that is down.
 * `module(env)` builds the service's root module from an environment, as its main.ts would.
 */
export function describeServiceHealth(service: string, module: (env: NodeJS.ProcessEnv) => unknown): void {
  describe(`${service} health (real Postgres and Redis)`, () => {
    let db: TestDatabase;
    let running: ServiceUnderTest | undefined;
    beforeAll(async () => {
      db = await createTestDatabase(service);
    });
    afterEach(async () => {
      await running?.close();
      running = undefined;
    });
    afterAll(async () => {
      await db.drop();
    });

    it('is live and ready when Postgres and Redis answer', async () => {
      running = await startServiceForTest(service, module(serviceTestEnv(db.url)));
      const live = await fetch(`${running.url}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok', service });
      const ready = await fetch(`${running.url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok', checks: { postgres: { status: 'up' }, redis: { status: 'up' } } });
    });

    it('is live but not ready when Redis does not answer, and says why', async () => {
      running = await startServiceForTest(service, module(serviceTestEnv(db.url, { REDIS_URL: 'redis://127.0.0.1:1' })));
      expect((await fetch(`${running.url}/health/live`)).status).toBe(200);
      const ready = await fetch(`${running.url}/health/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({
        status: 'unavailable',
        checks: { postgres: { status: 'up' }, redis: { status: 'down', error: expect.any(String) } },
      });
    });
  });
}
