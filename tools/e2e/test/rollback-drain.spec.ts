/**
 * A rollback to the release a deploy just replaced, while that release still drains (a slow
 * request holds it, with a long drain grace): through the whole platform (launcher, gateway,
 * worker, runtime supervisor, nginx data plane, the runtime sandbox on), the process that still
 * runs it serves again — it is not stopped when the drain's grace runs out, and no second one
 * is started beside it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Platform, type Account } from './support/platform.js';
import { RequestLoop } from './support/request-loop.js';

/** How long the edge lets a replaced release finish what it is answering (the default is 5 s). */
const DRAIN_GRACE_MS = 30_000;

/**
 * Answers its version and a boot id (one per process, also in its log); `/slow` is answered only
 * once `/release` is asked (at most after ten minutes).
 */
const APP = (version: string) => `import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
const boot = randomUUID();
console.log('booted ' + boot);
const held = [];
createServer((req, res) => {
  if (req.url === '/slow') {
    held.push(res);
    setTimeout(() => res.end('late'), 600000).unref();
    return;
  }
  if (req.url === '/release') {
    for (const r of held.splice(0)) r.end('slow done');
    return res.end('released');
  }
  res.end(JSON.stringify({ version: '${version}', boot }));
}).listen(Number(process.env.PORT));
`;

interface Task {
  taskId: string;
  status: string;
  steps: { name: string; log?: string }[];
  error?: unknown;
}

describe('a rollback to the release still draining', () => {
  let platform: Platform;
  const dirs: string[] = [];

  async function deploy(account: Account, version: string): Promise<{ task: Task; releaseId: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-e2e-rollback-drain-'));
    dirs.push(dir);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'drain', private: true, type: 'module', scripts: { start: 'node server.js' } }));
    await writeFile(join(dir, 'server.js'), APP(version));
    const task = (await platform.deploy(account, dir)) as unknown as Task;
    if (task.status !== 'succeeded')
      throw new Error(
        `deploy failed: ${JSON.stringify(task.error)}\n${task.steps
          .map((s) => s.log ?? '')
          .join('\n')
          .slice(-3000)}`,
      );
    const [release] = await platform.query<{ id: string }>('SELECT id FROM releases WHERE deployment_id = $1', [task.taskId]);
    return { task, releaseId: release!.id };
  }

  /** How many times the release's process started (its log, as the runtime writes it on this machine). */
  async function boots(releaseId: string): Promise<number> {
    const log = await readFile(join(platform.home, 'runtime', 'logs', `${releaseId}.log`), 'utf8').catch(() => '');
    return log.match(/booted /g)?.length ?? 0;
  }

  beforeAll(async () => {
    platform = await Platform.start('rollback-drain', { DRAIN_GRACE_MS: String(DRAIN_GRACE_MS) });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('the process still running it serves again, past the grace of the drain that began at the deploy, and it never runs twice', async () => {
    const account = await platform.bootstrap('drain@example.com', 'Drain Shop');
    const env = platform.cliEnv(account);
    const host = `${account.slug}.localhost:${platform.ports.edge}`;
    const x = await deploy(account, 'x');
    const first = await platform.viaEdge(account.slug);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ version: 'x' });

    // A visitor's slow request to X: the drain after the next deploy waits for it (up to the grace).
    let slowSettled = false;
    const slow = platform.viaEdge(account.slug, '/slow', 10 * 60_000).finally(() => (slowSettled = true));
    await deploy(account, 'y');
    const deployedAt = Date.now();
    expect(JSON.parse((await platform.viaEdge(account.slug)).body)).toMatchObject({ version: 'y' });
    // X still drains: its process still holds the slow request.
    expect(slowSettled).toBe(false);

    const loop = new RequestLoop(platform.ports.edge, host, '/');
    let rollback: Awaited<ReturnType<Platform['cli']>>;
    try {
      rollback = await platform.cli(['rollback', '--json'], env);
      expect([rollback.code, rollback.stderr]).toEqual([0, '']);
      expect(JSON.parse(rollback.stdout)).toMatchObject({ liveReleaseId: x.releaseId });
      const rolledBackAt = Date.now();
      // Until well past the grace of X's drain (it began before the deploy answered).
      const until = deployedAt + DRAIN_GRACE_MS + 10_000;
      while (Date.now() < until) await new Promise((r) => setTimeout(r, 500));
      const afterRollback = loop.samples.filter((s) => s.at > rolledBackAt);
      const other = afterRollback.filter((s) => s.status !== 200 || s.body !== first.body);
      console.log(
        `rollback to the draining release: ${afterRollback.length} requests in the ${Math.round((until - rolledBackAt) / 1000)} s after it, ${other.length} failed or answered by another process`,
      );
      expect({ other: other.length, sample: other.slice(0, 3).map((s) => ({ status: s.status, body: s.body.slice(0, 80) })) }).toEqual({
        other: 0,
        sample: [],
      });
      expect(afterRollback.length).toBeGreaterThan(50);
    } finally {
      await loop.stop();
    }
    // Before the rollback, nothing failed either (X, then Y).
    expect(loop.failures()).toEqual([]);

    // The very process that held the slow request answers it.
    expect(await platform.viaEdge(account.slug, '/release')).toMatchObject({ status: 200, body: 'released' });
    expect(await slow).toMatchObject({ status: 200, body: 'slow done' });
    expect(await boots(x.releaseId)).toBe(1);
  }, 300_000);
});
