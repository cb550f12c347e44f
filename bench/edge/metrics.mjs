// Metrics collection on and off (issue 30): the edge's proxied throughput with EDGE_METRICS=on
// (each answer counted: nginx writes a buffered access log the Node edge reads; the Node plane
// counts on each response's finish) against EDGE_METRICS=off, for both data planes, the same app,
// the same run. wrk -t1 -c50 keep-alive, RUNS runs of DURATION s per row, on and off interleaved
// (an edge restart between them); medians printed with the proxy's CPU per request (nginx's
// workers plus the Node edge, which reads the log). Runtime sandbox off: the proxies compared, not
// pasta's cap on the app.
// Run: pnpm nx run-many -t build && node bench/edge/metrics.mjs
// Env: DURATION (5), RUNS (3), CONNECTIONS (50), BENCH_RESULT_FILE.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensure, median, workersOf, wrk as wrkRun } from './wrk.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testing = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));
const { FIXTURES, sourceTar } = testing;
const DURATION = Number(process.env.DURATION ?? 5);
const RUNS = Number(process.env.RUNS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
ensure('wrk', ['wrk']);
/** One wrk run with the proxy's CPU per request (`pids`: the proxy's processes now). */
const wrk = (port, host, path, pids) => wrkRun(port, host, path, { connections: CONNECTIONS, duration: DURATION, proxyPids: () => pids });

const rows = [];
const h = await testing.DeployHarness.create('bench-metrics');
try {
  const env = { RUNTIME_SANDBOX: 'off' };
  const port = await testing.freePort();
  let edge = await h.startEdge(port, { ...env, LOG_LEVEL: 'warn', EDGE_DATA_PLANE: 'nginx', EDGE_METRICS: 'on' });
  await h.startWorker({ ...env, EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}` });
  const applicationId = await h.createApplication({ slug: 'bench-metrics' });
  const row = await h.waitForFinal(await h.deploy(applicationId, await sourceTar(join(FIXTURES, 'node-echo'))), 180_000);
  if (row.status !== 'succeeded') throw new Error(JSON.stringify(row.error));
  const host = `bench-metrics.localhost:${port}`;
  const serving = () =>
    spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Host: ${host}`, `http://127.0.0.1:${port}/x`], { encoding: 'utf8' }).stdout ===
    '200';
  for (const plane of ['nginx', 'node']) {
    for (let run = 0; run < RUNS; run++) {
      for (const metrics of ['on', 'off']) {
        await edge.stop();
        edge = await h.startEdge(port, { ...env, LOG_LEVEL: 'warn', EDGE_DATA_PLANE: plane, EDGE_METRICS: metrics });
        await testing.waitFor(serving, { timeoutMs: 60_000, what: `the ${plane} plane serving` });
        const state = join(h.home, 'runtime', 'nginx');
        const pids = () =>
          plane === 'nginx' ? [...workersOf(Number(readFileSync(join(state, 'nginx.pid'), 'utf8').trim())), edge.child.pid] : [edge.child.pid];
        wrk(port, host, '/x', []); // warm-up, not recorded
        rows.push({ plane, metrics, ...wrk(port, host, '/x', pids()), load1: loadavg()[0] });
      }
    }
  }
} finally {
  await h.close();
}

const result = {};
console.log(
  `\nedge metrics collection: wrk -t1 -c${CONNECTIONS}, ${DURATION} s per run, ${RUNS} runs per row (medians, on/off interleaved), ${cpus().length} cores shared by wrk, the proxy and the app; runtime sandbox off`,
);
console.log('| data plane | metrics | req/s (median) | p50 ms | p99 ms | proxy CPU µs/request (nginx workers + Node edge) | runs (req/s) | non-2xx | load1 |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const plane of ['nginx', 'node']) {
  for (const metrics of ['on', 'off']) {
    const rs = rows.filter((r) => r.plane === plane && r.metrics === metrics);
    const r = {
      rps: median(rs.map((x) => x.rps)),
      p50: median(rs.map((x) => x.p50)),
      p99: median(rs.map((x) => x.p99)),
      cpuUs: median(rs.map((x) => x.cpuUs)),
    };
    result[`${plane}|${metrics}`] = r;
    console.log(
      `| ${plane} | ${metrics} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuUs.toFixed(1)} | ${rs.map((x) => Math.round(x.rps)).join(' / ')} | ${rs.reduce((n, x) => n + x.non2xx, 0)} | ${median(rs.map((x) => x.load1)).toFixed(2)} |`,
    );
  }
  const on = result[`${plane}|on`];
  const off = result[`${plane}|off`];
  console.log(`${plane} plane: metrics on ${(on.rps / off.rps).toFixed(3)}× the req/s of off, CPU per request ${(on.cpuUs - off.cpuUs).toFixed(1)} µs more`);
}
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({ result, rows }));
