// Time from an accepted deploy (source stored, row committed, job enqueued — what the gateway
// does) to `succeeded`, cold (new application: empty dependency and build caches) and warm (same
// application redeployed, unchanged lockfile), for the static-site and node-server fixtures and two
// real framework starters with lockfiles (bench/time-to-live/projects: a create-next-app shaped
// Next.js 16 app and a `npm create vite` React + TS app), with each step's time and the artifact.
// Run: pnpm nx run-many -t build && node bench/time-to-live/time-to-live.mjs
//   RUNS=3 (default), ROWS=static-site,node-server,next-starter,vite-starter,turbo-web,angular-ssr (default: all)
// Real Postgres, Redis, build-worker process and edge process (Node releases are started and
// health-checked by the edge before they count as succeeded). Node toolchains and package
// managers come from the per-machine cache (SLIPWAY_TEST_TOOLCHAINS, fetched once), as on a
// running platform; "cold" is a new application, not a new machine.
import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// libs/testing's DeployHarness: its own database, Redis prefix and blob dir, deploys created as the gateway does.
const testing = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('@slipway/testing'));
const RUNS = Number(process.env.RUNS ?? 3);
const PROJECTS = join(dirname(fileURLToPath(import.meta.url)), 'projects');
/** Goals (issue 18 and earlier): printed beside the figures. */
const ROWS = {
  'static-site': { dir: join(testing.FIXTURES, 'static-site'), goal: { cold: 3_000, warm: 3_000 } },
  'node-server': { dir: join(testing.FIXTURES, 'node-server'), goal: { warm: 15_000 } },
  'next-starter': { dir: join(PROJECTS, 'next-starter'), goal: { cold: 60_000, warm: 25_000, artifactBytes: 30 * 1024 * 1024, packageRelease: 5_000 } },
  'vite-starter': { dir: join(PROJECTS, 'vite-starter'), goal: { warm: 10_000 } },
  // Issue 32: create-turbo's monorepo (pnpm workspaces, two Next.js apps) deploying apps/web, and `ng new --ssr`.
  'turbo-web': { dir: join(testing.FIXTURES, 'turbo-monorepo'), extra: { 'slipway.json': JSON.stringify({ rootDirectory: 'apps/web' }) }, goal: {} },
  'angular-ssr': { dir: join(testing.FIXTURES, 'angular-ssr'), goal: {} },
};
const chosen = (process.env.ROWS ?? Object.keys(ROWS).join(',')).split(',').filter((name) => ROWS[name]);

const h = await testing.DeployHarness.create('bench-ttl');
const edgePort = await testing.freePort();
// Behind a TLS-intercepting proxy the platform's processes need its CA to reach the registry.
const toolchains = {
  NODE_TOOLCHAIN_DIR: process.env.SLIPWAY_TEST_TOOLCHAINS ?? '/tmp/slipway-toolchains-test',
  ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
};
const edgeEnv = {
  EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`,
  APPS_DOMAIN: `localhost:${edgePort}`,
  RUNTIME_SANDBOX: process.env.RUNTIME_SANDBOX ?? 'on',
  ...toolchains,
};
// RUNTIME_SANDBOX=off measures apps without the runtime sandbox (the cost of the sandbox is the difference).
console.log(`runtime sandbox: ${edgeEnv.RUNTIME_SANDBOX}`);
await h.startEdge(edgePort, { ...edgeEnv, LOG_LEVEL: 'warn', HEALTH_TIMEOUT_MS: '60000' });
await h.startWorker(edgeEnv);

async function timeToLive(applicationId, source) {
  const started = performance.now();
  const wall = Date.now();
  const row = await h.waitForFinal(await h.deploy(applicationId, source), 600_000, 25);
  const ms = performance.now() - started;
  if (row.status !== 'succeeded')
    throw new Error(
      `deploy failed: ${JSON.stringify(row.error)}\n${row.steps
        .map((s) => `${s.name}: ${s.log}`)
        .join('\n')
        .slice(-3000)}`,
    );
  if (process.env.TTL_TRACE) {
    // Where the time went inside the steps: the lines of each step's log that carry a duration.
    const first = row.steps.find((step) => step.startedAt);
    const last = row.steps.findLast((step) => step.finishedAt);
    console.log(
      `  waited ${((Date.parse(first.startedAt) - wall) / 1000).toFixed(2)} s for a worker; ${((wall + ms - Date.parse(last.finishedAt)) / 1000).toFixed(2)} s from the last step to succeeded being seen`,
    );
    for (const line of (row.steps.find((step) => step.name === 'release')?.log ?? '').split('\n').filter(Boolean))
      console.log(`  release: ${line.slice(0, 200)}`);
    for (const step of row.steps)
      if (step.name !== 'release')
        for (const line of (step.log ?? '')
          .split('\n')
          .filter((l) => /\d+(\.\d+)? ?(ms|s)\b/.test(l))
          .slice(-12))
          console.log(`  ${step.name}: ${line.slice(0, 200)}`);
  }
  return { ms, steps: Object.fromEntries(row.steps.map((s) => [s.name, s.durationMs ?? 0])), artifact: row.spec?.artifact ?? null };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
const loads = [];
try {
  for (const name of chosen) {
    const source = await testing.sourceTar(ROWS[name].dir, ROWS[name].extra);
    const runs = { cold: [], warm: [] };
    for (let i = 0; i < RUNS; i += 1) {
      const app = await h.createApplication();
      runs.cold.push(await timeToLive(app, source));
      runs.warm.push(await timeToLive(app, source));
      loads.push(loadavg()[0]);
    }
    results.push({ name, ...runs });
  }
} finally {
  await h.close();
}

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const STEPS = ['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release'];
/** Accept → succeeded minus the steps: waiting for the worker, the commit, the edge's route. */
const outside = (run) => run.ms - STEPS.reduce((sum, step) => sum + (run.steps[step] ?? 0), 0);
const stepMedian = (runs, step) => median(runs.map((r) => r.steps[step] ?? 0));
const verdict = (value, goal) => (goal === undefined ? '' : value <= goal ? ' ✓' : ' ✗');
console.log(
  `\ntime to live: accept → succeeded (${RUNS} runs each, medians), ${process.version}, ${cpus().length} cores, load (1 min) ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}\n`,
);
console.log(`| project | cache | total (min–max) | ${STEPS.join(' | ')} | outside the steps | package+release | artifact | goal |`);
console.log(`|---|---|---|${STEPS.map(() => '---').join('|')}|---|---|---|---|`);
for (const r of results) {
  const goal = ROWS[r.name].goal;
  for (const cache of ['cold', 'warm']) {
    const runs = r[cache];
    const total = median(runs.map((x) => x.ms));
    const pr = median(runs.map((x) => (x.steps.package ?? 0) + (x.steps.release ?? 0)));
    const artifact = runs.at(-1).artifact;
    const goals = [
      goal[cache] !== undefined ? `≤ ${s(goal[cache])}${verdict(total, goal[cache])}` : null,
      goal.packageRelease !== undefined ? `pkg+rel ≤ ${s(goal.packageRelease)}${verdict(pr, goal.packageRelease)}` : null,
      goal.artifactBytes !== undefined && artifact ? `artifact ≤ ${mb(goal.artifactBytes)}${verdict(artifact.bytes, goal.artifactBytes)}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    console.log(
      `| ${r.name} | ${cache} | ${s(total)} (${s(Math.min(...runs.map((x) => x.ms)))}–${s(Math.max(...runs.map((x) => x.ms)))}) | ${STEPS.map((step) => s(stepMedian(runs, step))).join(' | ')} | ${s(median(runs.map(outside)))} | ${s(pr)} | ${artifact ? `${mb(artifact.bytes)}, ${artifact.files} files` : '-'} | ${goals} |`,
    );
  }
}
// `pnpm bench` (bench/run.mjs) reads the figures from here.
if (process.env.BENCH_RESULT_FILE) {
  const figures = (r) => [
    [`${r.name}.coldMs`, median(r.cold.map((x) => x.ms))],
    [`${r.name}.warmMs`, median(r.warm.map((x) => x.ms))],
    [`${r.name}.packageReleaseMs`, median(r.warm.map((x) => (x.steps.package ?? 0) + (x.steps.release ?? 0)))],
    [`${r.name}.artifactBytes`, r.warm.at(-1).artifact?.bytes ?? null],
  ];
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(Object.fromEntries(results.flatMap(figures))));
}
