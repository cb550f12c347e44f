import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DependencyProbe } from './dependency.probe.js';

const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('DependencyProbe siblings (real Redis)', () => {
  const prefix = `probe-test-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(REDIS);
  const probe = new DependencyProbe({
    service: 'gateway',
    redisUrl: REDIS,
    siblings: { 'build-worker': { heartbeatPattern: `${prefix}:heartbeat:build-worker:*`, whenDown: 'no build worker is consuming' } },
  });
  afterAll(async () => {
    await redis.del(`${prefix}:heartbeat:build-worker:a`, `${prefix}:heartbeat:build-worker:b`);
    redis.disconnect();
    await probe.onModuleDestroy();
  });

  it('reports a sibling down without a heartbeat, up with one, and never fails readiness for it', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const down = await probe.check();
    expect(down).toMatchObject({
      status: 'ok',
      checks: { redis: { status: 'up' } },
      siblings: { 'build-worker': { status: 'down', error: 'no build worker is consuming', count: 0 } },
    });

    await redis.set(`${prefix}:heartbeat:build-worker:a`, '{}', 'PX', 5000);
    await redis.set(`${prefix}:heartbeat:build-worker:b`, '{}', 'PX', 5000);
    expect((await probe.check()).siblings).toEqual({ 'build-worker': { status: 'up', count: 2 } });

    // The heartbeat expiring (a worker killed without cleaning up) is the same as none.
    await redis.pexpire(`${prefix}:heartbeat:build-worker:a`, 1);
    await redis.del(`${prefix}:heartbeat:build-worker:b`);
    await new Promise((r) => setTimeout(r, 50));
    expect((await probe.sibling('build-worker')).status).toBe('down');
  });

  it('says unknown (not down) when Redis itself does not answer', async () => {
    const away = new DependencyProbe({
      service: 'gateway',
      redisUrl: 'redis://127.0.0.1:1',
      timeoutMs: 300,
      siblings: { 'build-worker': { heartbeatPattern: 'x:*', whenDown: 'none' } },
    });
    const report = await away.check();
    expect(report.status).toBe('unavailable');
    expect(report.siblings!['build-worker']).toMatchObject({ status: 'unknown', error: expect.stringMatching(/^Redis: /) });
    await away.onModuleDestroy();
  });
});
