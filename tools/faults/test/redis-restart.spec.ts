/**
 * Redis stopped in the middle of a deploy: the gateway refuses new deploys at once with a coded
 * 503 (never hangs), and once Redis is back every accepted task reaches a terminal state.
 */
import { rm } from 'node:fs/promises';
import { waitFor } from '@slipway/testing';
import { fixtureDir, slowInstallDir } from './support/fixtures.js';
import { Platform, type Account } from './support/platform.js';

describe('fault: Redis restarted mid-deploy', () => {
  let platform: Platform;
  let first: Account;
  let second: Account;
  let third: Account;
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await Platform.start({ label: 'redis-restart', env: { RECONCILE_INTERVAL_MS: '1000' } });
    [first, second, third] = [await platform.bootstrap('Redis One'), await platform.bootstrap('Redis Two'), await platform.bootstrap('Redis Three')];
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 unavailable (JSON, coded) while Redis is down, then drains the queued tasks', async () => {
    const slow = await slowInstallDir(5);
    const site = await fixtureDir('static-site');
    dirs.push(slow, site);
    const building = await platform.deployNoWait(first, slow);
    await waitFor(async () => (await platform.task(first, building)).steps.find((s) => s.name === 'install')?.status === 'running', {
      timeoutMs: 60_000,
      what: 'install to start',
    });
    // One worker, concurrency 1: this one waits in the queue behind the running build.
    const queued = await platform.deployNoWait(second, site);

    await platform.redis.stop();
    const refused = await platform.postDeploy(third);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'unavailable', error: expect.stringMatching(/Redis/) });
    // Task status comes from Postgres and still answers.
    expect(['queued', 'building']).toContain((await platform.task(second, queued)).status);

    await platform.redis.start();
    // Accepted before the outage: neither is lost, both finish.
    const [a, b] = [await platform.waitForFinal(first, building, 180_000), await platform.waitForFinal(second, queued, 180_000)];
    if (a.status === 'failed') expect(a.error).toMatchObject({ code: expect.any(String) });
    expect(b.status).toBe('succeeded');
    // And the gateway accepts again without a restart.
    const accepted = await waitFor(
      async () => {
        const r = await platform.postDeploy(third);
        return r.status === 202 ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the gateway to accept again' },
    );
    const id = (accepted.body as { taskId: string }).taskId;
    expect((await platform.waitForFinal(third, id)).status).toBe('succeeded');
  });
});
