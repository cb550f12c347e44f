// Time from an accepted deploy (source stored, row committed, job enqueued — what the gateway
// does) to `succeeded`, for the static site and the Node server fixtures, cold (new application:
// empty dependency cache) and warm (same application, unchanged lockfile).
// Run: pnpm nx run-many -t build && node bench/time-to-live/time-to-live.mjs
// Real Postgres, Redis, build-worker process and edge process (Node releases are started and
// health-checked by the edge before they count as succeeded).
import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// libs/testing's DeployHarness: its own database, Redis prefix and blob dir, deploys created as the gateway does.
const testing = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('@slipway/testing'));
const RUNS = Number(process.env.RUNS ?? 3);

const h = await testing.DeployHarness.create('bench-ttl');
const edgePort = await testing.freePort();
const edgeEnv = { EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: `localhost:${edgePort}`, RUNTIME_SANDBOX: process.env.RUNTIME_SANDBOX ?? 'on' };
// RUNTIME_SANDBOX=off measures apps without the runtime sandbox (the cost of the sandbox is the difference).
console.log(`runtime sandbox: ${edgeEnv.RUNTIME_SANDBOX}`);
await h.startEdge(edgePort, { ...edgeEnv, LOG_LEVEL: 'warn' });
await h.startWorker(edgeEnv);

async function timeToLive(applicationId, source) {
  const started = performance.now();
  const row = await h.waitForFinal(await h.deploy(applicationId, source), 180_000, 25);
  const ms = performance.now() - started;
  if (row.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(row.error)}`);
  return { ms, steps: Object.fromEntries(row.steps.map((s) => [s.name, s.durationMs])) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
try {
  for (const fixture of ['static-site', 'node-server']) {
    const source = await testing.sourceTar(join(testing.FIXTURES, fixture));
    const cold = [];
    const warm = [];
    let lastSteps;
    for (let i = 0; i < RUNS; i += 1) {
      const app = await h.createApplication();
      cold.push((await timeToLive(app, source)).ms);
      const w = await timeToLive(app, source);
      warm.push(w.ms);
      lastSteps = w.steps;
    }
    results.push({ fixture, cold, warm, lastSteps });
  }
} finally {
  await h.close();
}

const f = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(`\ntime to live: accept → succeeded (${RUNS} runs each, median / min / max), ${process.version}, ${(await import('node:os')).cpus().length} cores\n`);
console.log('| project | cache | median | min | max | target |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  const target = r.fixture === 'static-site' ? '< 3 s' : '< 15 s (warm)';
  console.log(`| ${r.fixture} | cold | ${f(median(r.cold))} | ${f(Math.min(...r.cold))} | ${f(Math.max(...r.cold))} | ${target} |`);
  console.log(`| ${r.fixture} | warm | ${f(median(r.warm))} | ${f(Math.min(...r.warm))} | ${f(Math.max(...r.warm))} | ${target} |`);
}
console.log('\nlast warm run, step durations (ms):');
for (const r of results) console.log(`  ${r.fixture}: ${JSON.stringify(r.lastSteps)}`);
// `pnpm bench` (bench/run.mjs) reads the figures from here.
if (process.env.BENCH_RESULT_FILE) {
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(Object.fromEntries(results.flatMap((r) => [[`${r.fixture}.coldMs`, median(r.cold)], [`${r.fixture}.warmMs`, median(r.warm)]]))));
}
