/**
 * Postgres (a private embedded one) stopped and started again under running services: the
 * services that need it report not-ready (503) while it is away and ready again afterwards,
 * without a restart; the edge keeps serving live applications from memory throughout.
 */
import { rm } from 'node:fs/promises';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { Platform, type Account } from './support/platform.js';

const NEEDS_POSTGRES = ['gateway', 'auth-service', 'build-worker'];

describe('fault: Postgres restarted', () => {
  let platform: Platform;
  let account: Account;
  let site: string;

  beforeAll(async () => {
    platform = await Platform.start({ label: 'pg-restart', database: 'embedded', services: ['gateway', 'auth-service', 'edge', 'build-worker'] });
    account = await platform.bootstrap('Before Postgres');
    site = await fixtureDir('static-site');
    expect((await platform.cli(['deploy', site, '--json'], platform.cliEnv(account))).code).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    await rm(site, { recursive: true, force: true });
  });

  it('services go not-ready while it is down and recover on their own once it is back', async () => {
    const pids = [...platform.processes].map(([name, p]) => [name, p.child.pid]);
    const served = await platform.viaEdge(account);
    expect(served.status).toBe(200);

    await platform.postgres!.stop();
    for (const name of NEEDS_POSTGRES) {
      await waitFor(async () => (await platform.ready(name)) === 503, { timeoutMs: 30_000, intervalMs: 200, what: `${name} to report not-ready` });
    }
    // The edge routes from memory: the live application still answers.
    const edge = platform.process('edge');
    expect({ exited: edge.child.exitCode ?? edge.child.signalCode, output: edge.child.exitCode === null ? '' : edge.output().slice(-3000) }).toEqual({
      exited: null,
      output: '',
    });
    expect(await platform.viaEdge(account)).toEqual(served);

    await platform.postgres!.start();
    for (const name of [...NEEDS_POSTGRES, 'edge']) {
      await waitFor(async () => (await platform.ready(name)) === 200, { timeoutMs: 60_000, intervalMs: 200, what: `${name} to be ready again` });
    }
    // Nobody was restarted: the same processes are still running.
    for (const p of platform.processes.values()) expect(p.child.exitCode).toBeNull();
    expect([...platform.processes].map(([name, p]) => [name, p.child.pid])).toEqual(pids);

    // And the platform works end to end again.
    const next = await platform.cli(['deploy', site, '--json'], platform.cliEnv(account));
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: 'succeeded' });
    expect(await platform.viaEdge(account)).toEqual(served);
  });
});
