/** The edge process restarted: live applications (static and Node) come back at their addresses. */
import { rm } from 'node:fs/promises';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { Platform, type Account } from './support/platform.js';

describe('fault: the edge is restarted', () => {
  let platform: Platform;
  let site: Account;
  let server: Account;
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await Platform.start({ label: 'edge-restart' });
    [site, server] = [await platform.bootstrap('Edge Static'), await platform.bootstrap('Edge Node')];
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.each([['SIGTERM'], ['SIGKILL']] as const)('after %s, live applications come back at their addresses', async (signal) => {
    if (!dirs.length) {
      dirs.push(await fixtureDir('static-site'), await fixtureDir('node-server'));
      for (const [account, dir] of [
        [site, dirs[0]!],
        [server, dirs[1]!],
      ] as const) {
        const result = await platform.cli(['deploy', dir, '--json'], platform.cliEnv(account));
        expect(result.code).toBe(0);
      }
    }
    const before = [await platform.viaEdge(site), await platform.viaEdge(server, '/hello')];
    expect(before.map((r) => r.status)).toEqual([200, 200]);

    const edge = platform.process('edge');
    await edge.stop(signal, 15_000);
    expect((await platform.viaEdge(site)).status).toBe(0);
    platform.restartService('edge');

    await waitFor(async () => (await platform.ready('edge')) === 200, { timeoutMs: 60_000, intervalMs: 200, what: 'the edge to be ready' });
    const after = await waitFor(
      async () => {
        const responses = [await platform.viaEdge(site), await platform.viaEdge(server, '/hello')];
        return responses.every((r) => r.status === 200) ? responses : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'both applications to answer again' },
    );
    expect(after).toEqual(before);
  });
});
