/**
 * Postgres (a private embedded one) stopped and started again under running services: each
 * service reports not-ready (503) while it is away and ready again afterwards, without a restart.
 */
import { rm } from 'node:fs/promises';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { Platform, type ServiceName } from './support/platform.js';

const SERVICES: ServiceName[] = ['gateway', 'auth-service', 'edge'];

describe('fault: Postgres restarted', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await Platform.start({ label: 'pg-restart', database: 'embedded', services: ['gateway', 'auth-service', 'edge', 'build-worker'] });
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('services go not-ready while it is down and recover on their own once it is back', async () => {
    const pids = [...platform.processes].map(([name, p]) => [name, p.child.pid]);
    await platform.postgres!.stop();
    for (const service of SERVICES) {
      await waitFor(async () => (await platform.ready(service)) === 503, { timeoutMs: 30_000, intervalMs: 200, what: `${service} to report not-ready` });
    }
    await platform.postgres!.start();
    for (const service of SERVICES) {
      await waitFor(async () => (await platform.ready(service)) === 200, { timeoutMs: 60_000, intervalMs: 200, what: `${service} to be ready again` });
    }
    // Nobody was restarted: the same processes are still running.
    for (const p of platform.processes.values()) expect(p.child.exitCode).toBeNull();
    expect([...platform.processes].map(([name, p]) => [name, p.child.pid])).toEqual(pids);

    // And the platform works end to end again.
    const account = await platform.bootstrap('After Postgres');
    const site = await fixtureDir('static-site');
    const result = await platform.cli(['deploy', site, '--json'], platform.cliEnv(account));
    await rm(site, { recursive: true, force: true });
    expect(result.code).toBe(0);
    expect((await platform.viaEdge(account)).status).toBe(200);
  });
});
