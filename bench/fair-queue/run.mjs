// bench/fair-queue: how long the victim owner's deploy waits in the build queue behind an attacker
// owner who queued several long builds first, with the fair queue (round-robin across owners, the
// default) and with plain FIFO (DEPLOY_QUEUE_ORDER=fifo, the peer) in the same run. One worker,
// one build slot: the worst case, where the victim can only get the slot the attacker holds.
// The attacker: ATTACKER_APPS applications of one owner, each a build that sleeps BUILD_SECONDS
// (no dependencies, sandboxed like any build); the first is building when the others and then
// the victim's static site are queued. Deploys are created exactly as the gateway does.
// Run: pnpm nx run-many -t build && node bench/fair-queue/run.mjs
// Env: BUILD_SECONDS (10), ATTACKER_APPS (4), BENCH_RESULT_FILE (figures as JSON, for `pnpm bench`).
import { createRequire } from 'node:module';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testing = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('@slipway/testing'));
const BUILD_SECONDS = Number(process.env.BUILD_SECONDS ?? 10);
const ATTACKER_APPS = Number(process.env.ATTACKER_APPS ?? 4);

async function sleepyBuild(ms) {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-bench-fq-'));
  try {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'sleepy', private: true, scripts: { build: `node build.mjs ${ms}` } }));
    await writeFile(
      join(dir, 'build.mjs'),
      "import { mkdirSync, writeFileSync } from 'node:fs';\nsetTimeout(() => { mkdirSync('dist', { recursive: true }); writeFileSync('dist/index.html', '<p>slept</p>'); }, Number(process.argv[2]));\n",
    );
    return await testing.sourceTar(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const h = await testing.DeployHarness.create('bench-fair-queue');
const edgePort = await testing.freePort();
const edgeEnv = { EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: `localhost:${edgePort}` };
const figures = {};

async function times(id) {
  const { rows } = await h.pg.query(
    `SELECT extract(epoch FROM started_at - created_at) * 1000 AS queued_ms, extract(epoch FROM finished_at - started_at) * 1000 AS run_ms, status FROM deployments WHERE id = $1`,
    [id],
  );
  return { queuedMs: Number(rows[0].queued_ms), runMs: Number(rows[0].run_ms), status: rows[0].status };
}

try {
  await h.startEdge(edgePort, { ...edgeEnv, LOG_LEVEL: 'warn' });
  const site = await testing.sourceTar(join(testing.FIXTURES, 'static-site'));
  const build = await sleepyBuild(BUILD_SECONDS * 1000);
  for (const order of ['fair', 'fifo']) {
    const worker = await h.startWorker({ ...edgeEnv, WORKER_CONCURRENCY: '1', DEPLOY_QUEUE_ORDER: order, QUEUE_TURN_RETRY_MS: '300' });
    const first = await h.createApplication({ slug: `atk-${order}-${randomBytes(2).toString('hex')}` });
    const apps = [first];
    for (let i = 1; i < ATTACKER_APPS; i++) {
      const { rows } = await h.pg.query(
        `INSERT INTO applications (owner_id, name, slug) SELECT owner_id, $2, $2 FROM applications WHERE id = $1 RETURNING id`,
        [first, `atk-${order}-${i}-${randomBytes(2).toString('hex')}`],
      );
      apps.push(rows[0].id);
    }
    const victimApp = await h.createApplication({ slug: `victim-${order}-${randomBytes(2).toString('hex')}` });
    const attackerIds = [await h.deploy(apps[0], build)];
    await testing.waitFor(async () => ((await h.row(attackerIds[0])).status === 'building' ? true : undefined), { timeoutMs: 60_000, what: 'the first build' });
    for (const app of apps.slice(1)) attackerIds.push(await h.deploy(app, build));
    const victim = await h.deploy(victimApp, site);
    await h.waitForFinal(victim, 600_000);
    const v = await times(victim);
    figures[`${order}.victimQueuedMs`] = v.queuedMs;
    figures[`${order}.victimStatus`] = v.status;
    // The attacker's build as it ran (its first one: started → finished, the whole deploy).
    const a = await times((await h.waitForFinal(attackerIds[0], 600_000)).id);
    figures[`${order}.attackerBuildMs`] = a.runMs;
    for (const id of attackerIds.slice(1)) await h.waitForFinal(id, 600_000);
    await worker.stop();
  }
} finally {
  await h.close();
}

const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(
  `\nfair queue: attacker owner with ${ATTACKER_APPS} builds of ${BUILD_SECONDS} s queued first, victim's static deploy after; one build slot; ${process.version}, ${cpus().length} cores\n`,
);
console.log('| order | victim queue wait | attacker build (one deploy) | wait / build |');
console.log('|---|---|---|---|');
for (const order of ['fair', 'fifo']) {
  const wait = figures[`${order}.victimQueuedMs`];
  const build = figures[`${order}.attackerBuildMs`];
  console.log(
    `| ${order === 'fair' ? 'fair (round-robin, default)' : 'FIFO (peer)'} | ${s(wait)} (${figures[`${order}.victimStatus`]}) | ${s(build)} | ${(wait / build).toFixed(2)} |`,
  );
}
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(figures));
