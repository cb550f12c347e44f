// bench/deploy-queue: deploy-queue drain time with 1 vs 2 build workers (one static-site deploy
// for each of N applications, all enqueued at once) and deploys/minute sustained across 20
// applications with 2 workers (each application redeploys as soon as its last deploy finished).
// Deploys are created exactly as the gateway does (source blob, row, job), as bench/time-to-live.
// Run: pnpm nx run-many -t build && node bench/deploy-queue/run.mjs
// Env: APPS (20), SUSTAIN_SECONDS (60), BENCH_RESULT_FILE (figures as JSON, for `pnpm bench`).
import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// libs/testing's DeployHarness: its own database, Redis prefix and blob dir, deploys created as the gateway does.
const testing = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('@slipway/testing'));
const APPS = Number(process.env.APPS ?? 20);
const SUSTAIN_SECONDS = Number(process.env.SUSTAIN_SECONDS ?? 60);

const h = await testing.DeployHarness.create('bench-queue');
const edgePort = await testing.freePort();
const edgeEnv = { EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: `localhost:${edgePort}` };
let workers = [];

async function startWorkers(n) {
  workers = await Promise.all(Array.from({ length: n }, () => h.startWorker(edgeEnv)));
}
async function stopWorkers() {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
}

async function waitAll(ids, timeoutMs = 600_000) {
  return testing.waitFor(
    async () => {
      const { rows } = await h.pg.query(`SELECT status FROM deployments WHERE id = ANY($1::uuid[]) AND status IN ('succeeded', 'failed')`, [ids]);
      return rows.length === ids.length ? rows : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `${ids.length} deployments` },
  );
}

const figures = {};
try {
  await h.startEdge(edgePort, { ...edgeEnv, LOG_LEVEL: 'warn' });
  const source = await testing.sourceTar(join(testing.FIXTURES, 'static-site'));
  const apps = [];
  for (let i = 0; i < APPS; i++) apps.push(await h.createApplication({ slug: `bench-q${i}` }));

  for (const n of [1, 2]) {
    await startWorkers(n);
    await waitAll([await h.deploy(apps[0], source)]); // warm-up
    const started = performance.now();
    const ids = await Promise.all(apps.map((a) => h.deploy(a, source)));
    const rows = await waitAll(ids);
    figures[`drainMs.${n}`] = performance.now() - started;
    figures[`failed.${n}`] = rows.filter((r) => r.status === 'failed').length;
    if (n === 2) {
      // Sustained: every application redeploys as soon as its previous deploy is terminal.
      let done = 0;
      const until = performance.now() + SUSTAIN_SECONDS * 1000;
      const begun = performance.now();
      await Promise.all(
        apps.map(async (a) => {
          while (performance.now() < until) {
            await waitAll([await h.deploy(a, source)]);
            done += 1;
          }
        }),
      );
      figures.sustainedDeploys = done;
      figures.deploysPerMinute = (done * 60_000) / (performance.now() - begun);
    }
    await stopWorkers();
  }
} finally {
  await h.close();
}

console.log(`\ndeploy queue: ${APPS} applications, static-site fixture, ${process.version}, ${cpus().length} cores\n`);
console.log('| figure | value |');
console.log('|---|---|');
console.log(`| drain ${APPS} deploys, 1 worker | ${(figures['drainMs.1'] / 1000).toFixed(1)} s (${figures['failed.1']} failed) |`);
console.log(`| drain ${APPS} deploys, 2 workers | ${(figures['drainMs.2'] / 1000).toFixed(1)} s (${figures['failed.2']} failed) |`);
console.log(`| deploys/minute sustained, ${APPS} apps, 2 workers (${SUSTAIN_SECONDS} s) | ${figures.deploysPerMinute.toFixed(1)} |`);
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(figures));
