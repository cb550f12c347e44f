/**
 * kill -9 of the build worker in the middle of `install`, through the whole platform: the task is
 * retried (or failed with a reason) within the stall window, its locks are released, and the
 * application deploys again afterwards.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeFile } from '@slipway/config';
import { waitFor } from '@slipway/testing';
import { fixtureDir, slowInstallDir } from './support/fixtures.js';
import { Platform, type Account } from './support/platform.js';

const JOB_LOCK_MS = 3000;
const STALLED_INTERVAL_MS = 1500;
/** Lock expiry + two stall checks + a margin for a busy two-core machine. */
const STALL_WINDOW_MS = JOB_LOCK_MS + 2 * STALLED_INTERVAL_MS + 5000;

describe('fault: the build worker is killed with SIGKILL during install', () => {
  let platform: Platform;
  let account: Account;
  const dirs: string[] = [];

  beforeAll(async () => {
    platform = await Platform.start({
      label: 'worker-kill',
      env: { JOB_LOCK_MS: String(JOB_LOCK_MS), STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS), RECONCILE_INTERVAL_MS: '1000' },
    });
    account = await platform.bootstrap('Worker Kill');
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('retries or fails the task with a reason within the stall window, releases its locks, and a later deploy succeeds', async () => {
    const source = await slowInstallDir();
    dirs.push(source);
    const id = await platform.deployNoWait(account, source);
    await waitFor(async () => (await platform.task(account, id)).steps.find((s) => s.name === 'install')?.status === 'running', {
      timeoutMs: 60_000,
      what: 'install to start',
    });

    // The operator's view of the platform: the worker's pid from runtime.json.
    const runtime = JSON.parse(await readFile(join(platform.home, 'runtime.json'), 'utf8')) as RuntimeFile;
    const pid = runtime.processes['build-worker']!;
    expect(pid).toBe(platform.process('build-worker').child.pid);
    process.kill(pid, 'SIGKILL');
    await platform.process('build-worker').exited;
    const killedAt = Date.now();
    platform.restartService('build-worker');

    // Within the stall window the task is running again (a second attempt) or failed with a reason.
    const after = await waitFor(
      async () => {
        const row = (
          await platform.query<{ status: string; attempts: number; error: unknown }>('SELECT status, attempts, error FROM deployments WHERE id = $1', [id])
        )[0]!;
        return (row.attempts >= 2 && row.status !== 'queued') || row.status === 'failed' ? row : undefined;
      },
      { timeoutMs: STALL_WINDOW_MS + 30_000, intervalMs: 100, what: 'a second attempt or a failure' },
    );
    expect(Date.now() - killedAt).toBeLessThan(STALL_WINDOW_MS + 30_000);
    if (after.status === 'failed') expect(after.error).toMatchObject({ code: expect.any(String) });

    const final = await platform.waitForFinal(account, id);
    if (final.status === 'failed') expect(final.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    else expect(final.status).toBe('succeeded');

    // No BullMQ lock is left behind, and the application's one-active-deploy lock is free.
    await waitFor(async () => (await platform.redis.cli('--scan', '--pattern', '*:lock')).trim() === '', { timeoutMs: 10_000, what: 'locks to be released' });
    const next = await fixtureDir('static-site');
    dirs.push(next);
    const result = await platform.cli(['deploy', next, '--json'], platform.cliEnv(account));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'succeeded' });
    expect((await platform.viaEdge(account)).status).toBe(200);
  });
});
