import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, processesWith as processesOf, sourceTar, waitFor } from '@slipway/testing';

/** Processes whose command line carries the marker (the build's `node build.mjs <marker>`), on the whole machine. */
const processesWith = (marker: string) => processesOf('cmdline', marker);

/** Whether `pid` has a handler for signal number `signo` (its SigCgt mask in /proc). */
async function catches(pid: number, signo: number): Promise<boolean> {
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1];
  return mask !== undefined && ((BigInt(`0x${mask}`) >> BigInt(signo - 1)) & 1n) === 1n;
}

/**
 * The fair queue, the per-deploy build budget and the deadline from the build's start, with the
 * real worker processes (sandboxed builds), Postgres and Redis. Assertions are on the order rows
 * started and ended in (from the database), never on elapsed time.
 */

const steady = { JOB_LOCK_MS: '15000', STALLED_INTERVAL_MS: '5000', RECONCILE_INTERVAL_MS: '1000', QUEUE_TURN_RETRY_MS: '300' };

interface Timeline {
  id: string;
  status: string;
  started: number;
  finished: number;
  created: number;
  error: { code: string; message: string } | null;
}

/**
 * A project with no dependencies whose build sleeps `ms` (or until it gets SIGUSR2, whichever
 * comes first), then writes dist/; `marker` names its process.
 */
async function sleepyBuild(ms: number, marker: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-fq-'));
  try {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'sleepy', private: true, scripts: { build: `node build.mjs ${marker} ${ms}` } }));
    await writeFile(
      join(dir, 'build.mjs'),
      "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
        "const done = () => { mkdirSync('dist', { recursive: true }); writeFileSync('dist/index.html', '<p>slept</p>'); process.exit(0); };\n" +
        "process.on('SIGUSR2', done);\nsetTimeout(done, Number(process.argv[3]));\n",
    );
    return await sourceTar(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('fair build queue (real worker processes)', () => {
  let h: DeployHarness;
  const source: Record<string, Buffer> = {};
  beforeAll(async () => {
    h = await DeployHarness.create('fair-queue');
    source['static'] = await sourceTar(join(FIXTURES, 'static-site'));
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await h.stopWorkers();
  });

  /** Another application of an existing owner (the harness makes one owner per application). */
  async function sibling(applicationId: string): Promise<string> {
    const slug = `app-${randomBytes(3).toString('hex')}`;
    const { rows } = await h.pg.query(`INSERT INTO applications (owner_id, name, slug) SELECT owner_id, $2, $2 FROM applications WHERE id = $1 RETURNING id`, [
      applicationId,
      slug,
    ]);
    return rows[0].id as string;
  }

  async function timeline(ids: string[]): Promise<Timeline[]> {
    const { rows } = await h.pg.query(
      `SELECT id, status, error, extract(epoch FROM started_at) * 1000 AS started, extract(epoch FROM finished_at) * 1000 AS finished, extract(epoch FROM created_at) * 1000 AS created
         FROM deployments WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return ids.map((id) => {
      const row = rows.find((r) => r.id === id)!;
      return { id, status: row.status, error: row.error, started: Number(row.started), finished: Number(row.finished), created: Number(row.created) };
    });
  }

  it('two workers, one build per owner: owner A never holds both slots, and owner B starts while A still builds', async () => {
    await h.startWorker({ ...steady, WORKER_CONCURRENCY: '1', BUILDS_PER_OWNER: '1' });
    await h.startWorker({ ...steady, WORKER_CONCURRENCY: '1', BUILDS_PER_OWNER: '1' });
    const a1App = await h.createApplication();
    const aApps = [a1App, await sibling(a1App), await sibling(a1App)];
    const bApp = await h.createApplication();
    // A's first build holds its slot until the test lets it go (SIGUSR2); A's other two are short.
    // So "B started while A's first still built" is a fact of the order, not of timing.
    const holding = `fq-hold-${randomBytes(4).toString('hex')}`;
    // A's others are sent once its first runs: sent at once, either worker could claim one of them
    // first (seen in a full run: A's second ran and finished before its first began).
    const aIds: string[] = [await h.deploy(aApps[0]!, await sleepyBuild(120_000, holding))];
    const short = await sleepyBuild(300, `fq-short-${randomBytes(4).toString('hex')}`);
    await waitFor(async () => ((await processesWith(holding)).length > 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: "A's first build to run",
    });
    for (const app of aApps.slice(1)) aIds.push(await h.deploy(app, short));
    const bId = await h.deploy(bApp, source['static']!);

    // B goes through on the other slot while A's first still holds its own and A's others wait.
    expect((await h.waitForFinal(bId, 90_000)).status).toBe('succeeded');
    expect((await h.row(aIds[0]!)).status).toBe('building');
    expect((await Promise.all(aIds.slice(1).map((id) => h.row(id)))).map((r) => r.status)).toEqual(['queued', 'queued']);
    // The build's own node (argv `build.mjs <marker>`), not the shell or package manager around
    // it, once it catches SIGUSR2 (before that, on a loaded machine, the signal would kill it).
    const builds = await waitFor(
      async () => {
        const pids = await processesWith(`build.mjs\0${holding}`);
        return pids.length > 0 && (await Promise.all(pids.map((pid) => catches(pid, 12)))).every(Boolean) ? pids : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: "A's first build to catch SIGUSR2" },
    );
    for (const pid of builds) process.kill(pid, 'SIGUSR2');

    for (const id of aIds) await h.waitForFinal(id, 120_000);
    const [a1, a2, a3, b] = await timeline([...aIds, bId]);
    expect([a1, a2, a3, b].map((t) => t!.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    // At most one of A's at a time: each of A's started after the one before it finished.
    const aSorted = [a1!, a2!, a3!].sort((x, y) => x.started - y.started);
    expect(aSorted[0]!.id).toBe(a1!.id);
    for (let i = 1; i < aSorted.length; i++) expect(aSorted[i]!.started).toBeGreaterThanOrEqual(aSorted[i - 1]!.finished);
    // B took the free slot while A's first still built, ahead of A's other two.
    expect(b!.started).toBeLessThan(a1!.finished);
    expect(b!.started).toBeLessThan(aSorted[1]!.started);
  }, 240_000);

  it('BUILD_TOTAL_TIMEOUT_MS: a build past the deploy budget is killed, fails with build_timeout, and the slot builds the next deploy', async () => {
    await h.startWorker({ ...steady, WORKER_CONCURRENCY: '1', BUILD_TOTAL_TIMEOUT_MS: '5000' });
    const app = await h.createApplication();
    const marker = `fq-budget-${randomBytes(4).toString('hex')}`;
    const id = await h.deploy(app, await sleepyBuild(120_000, marker));
    await waitFor(async () => ((await processesWith(marker)).length > 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, what: 'the build to run' });
    const row = await h.waitForFinal(id, 60_000);
    expect(row).toMatchObject({
      status: 'failed',
      error: { code: 'build_timeout', step: 'build', message: expect.stringMatching(/together ran longer than 5 s \(BUILD_TOTAL_TIMEOUT_MS\)/) },
    });
    expect(await processesWith(marker)).toEqual([]);
    const next = await h.deploy(app, source['static']!);
    expect((await h.waitForFinal(next, 60_000)).status).toBe('succeeded');
  }, 150_000);

  it('DEPLOY_TIMEOUT_MS counts from the build start: the running build is killed at its deadline, and a deploy that waited behind it still gets its whole time', async () => {
    const DEADLINE_MS = 15_000;
    await h.startWorker({ ...steady, WORKER_CONCURRENCY: '1', DEPLOY_TIMEOUT_MS: String(DEADLINE_MS) });
    const [slowApp, waitingApp] = [await h.createApplication(), await h.createApplication()];
    const marker = `fq-deadline-${randomBytes(4).toString('hex')}`;
    const slow = await h.deploy(slowApp, await sleepyBuild(120_000, marker));
    await waitFor(async () => ((await processesWith(marker)).length > 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, what: 'the build to run' });
    const waiting = await h.deploy(waitingApp, await sleepyBuild(8000, `fq-after-${randomBytes(4).toString('hex')}`));

    const killed = await h.waitForFinal(slow, 90_000);
    expect(killed).toMatchObject({
      status: 'failed',
      error: { code: 'deadline_exceeded', step: 'build', message: expect.stringMatching(/after its build started \(DEPLOY_TIMEOUT_MS\)/) },
    });
    expect(killed.steps.find((s) => s.name === 'build')!.status).toBe('failed');
    expect(await processesWith(marker)).toEqual([]);

    expect((await h.waitForFinal(waiting, 90_000)).status).toBe('succeeded');
    const [, after] = await timeline([slow, waiting]);
    // Counted from acceptance it would have been past the deadline; from its start it was not.
    expect(after!.started).toBeGreaterThan(after!.created);
    expect(after!.finished - after!.created).toBeGreaterThan(DEADLINE_MS);
  }, 200_000);
});
