import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, processesWith, sourceTar } from '@slipway/testing';

/**
 * The runtime sandbox fails closed: when bubblewrap cannot create namespaces, a Node deploy fails
 * with `sandbox_unavailable` and nothing of the app runs; running unsandboxed is the operator's
 * explicit `RUNTIME_SANDBOX=off`, and then the deploy says so as a hazard.
 */
describe('runtime sandbox, from the deploy', () => {
  let fakeBin: string;

  beforeAll(async () => {
    fakeBin = await mkdtemp(join(tmpdir(), 'slipway-fake-bwrap-'));
    await chmod(fakeBin, 0o755);
    // What bubblewrap prints where user namespaces are not allowed.
    await writeFile(
      join(fakeBin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      { mode: 0o755 },
    );
  });
  afterAll(() => rm(fakeBin, { recursive: true, force: true }));

  async function deployEcho(edgeEnv: Record<string, string>) {
    const h = await DeployHarness.create('edge-sandbox');
    const canary = `sandbox-canary-${randomBytes(6).toString('hex')}`;
    try {
      const port = await freePort();
      await h.startEdge(port, { HEALTH_TIMEOUT_MS: '15000', ...edgeEnv });
      await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}` });
      const applicationId = await h.createApplication({ slug: 'echo', secrets: { ECHO_SECRET: canary } });
      const row = await h.waitForFinal(await h.deploy(applicationId, await sourceTar(join(FIXTURES, 'node-echo'))));
      return { row, processes: await processesWith('environ', canary) };
    } finally {
      await h.close();
    }
  }

  it('fails the deploy with sandbox_unavailable, saying how to fix it, when bwrap cannot create namespaces', async () => {
    const { row, processes } = await deployEcho({ PATH: `${fakeBin}:${process.env['PATH']}` });
    expect(row.status).toBe('failed');
    expect(row.error).toMatchObject({ code: 'sandbox_unavailable', step: 'release' });
    expect(row.error!.message).toMatch(/namespaces/);
    expect(row.error!.message).toMatch(/sysctl/);
    expect(processes).toEqual([]);
  }, 120_000);

  it('runs unsandboxed only when the operator says so, and every such deploy carries unsandboxed_runtime', async () => {
    const { row, processes } = await deployEcho({ RUNTIME_SANDBOX: 'off' });
    expect(row.status).toBe('succeeded');
    // The canary finds the app when it does run (so its absence above means something).
    expect(processes.length).toBeGreaterThan(0);
    expect(row.hazards).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'unsandboxed_runtime', severity: 'high' })]));
  }, 120_000);
});
