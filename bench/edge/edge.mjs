// Requests/s and latency through the edge: a static file, a proxied Node app, and the same Node
// app hit directly (the proxy's overhead is the difference), 50 connections, (a) closed loop at
// saturation, (b) at a fixed offered load both paths sustain, (c) 1 connection. What each figure
// means: bench/README.md. Latencies in ms with µs resolution (./loadgen.mjs).
// Run: pnpm nx run-many -t build && node bench/edge/edge.mjs
// Env: DURATION (s per case, 5), PAIRS (alternating direct/via pairs per comparison, 2),
//      RATE (offered requests/s for (b); default half the proxied closed-loop rate, /500),
//      EDGE_NODE_ARGS (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof to profile the edge),
//      EDGE_MAIN (edge entry point relative to the repo, to compare builds; apps/edge/dist/main.js),
//      CASES=static (the static rows only: identity and brotli).
import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// libs/testing's DeployHarness: its own database, Redis prefix and blob dir, deploys created as the gateway does.
const testing = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));
const DURATION = Number(process.env.DURATION ?? 5);
const PAIRS = Number(process.env.PAIRS ?? 2);
const STATIC_ONLY = process.env.CASES === 'static';
const { load } = await import('./loadgen.mjs');
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : undefined;
};
/** User + system CPU time of a process so far, in µs (Linux /proc; clock ticks are 10 ms). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
const { FIXTURES, sourceTar } = testing;

const h = await testing.DeployHarness.create('bench-edge');
const port = await testing.freePort();
const edgeEnv = { EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}`, RUNTIME_SANDBOX: process.env.RUNTIME_SANDBOX ?? 'on' };
// RUNTIME_SANDBOX=off measures apps without the runtime sandbox (the cost of the sandbox is the difference).
console.log(`runtime sandbox: ${edgeEnv.RUNTIME_SANDBOX}`);
let direct;
async function deploy(slug, source) {
  const row = await h.waitForFinal(await h.deploy(await h.createApplication({ slug }), source), 120_000);
  if (row.status !== 'succeeded') throw new Error(JSON.stringify(row.error));
}
let rate;
const rows = [];
try {
  const edge = await h.startEdge(
    port,
    { ...edgeEnv, LOG_LEVEL: 'warn' },
    { nodeArgs: process.env.EDGE_NODE_ARGS?.split(' ').filter(Boolean), main: process.env.EDGE_MAIN },
  );
  await h.startWorker(edgeEnv);

  const page = `<!doctype html><title>bench</title>${'<p>slipway edge benchmark</p>'.repeat(60)}`;
  await deploy('bench-static', await sourceTar(join(FIXTURES, 'static-site'), { 'bench.html': page }));

  // Measured with ./loadgen.mjs (µs resolution); every A/B pair runs back to back, alternating.
  const edgePid = edge.child.pid;
  const measure = async (name, mode, target, options, pid) => {
    await load({ ...target, ...options, durationMs: 1000 }); // warm-up
    const cpu0 = pid ? cpuMicros(pid) : 0;
    const r = await load({ ...target, ...options, durationMs: DURATION * 1000 });
    const row = {
      name,
      mode,
      connections: options.connections,
      ...r,
      cpuUsPerRequest: pid ? (cpuMicros(pid) - cpu0) / r.requests : undefined,
      load1: loadavg()[0],
    };
    rows.push(row);
    return row;
  };
  const staticTarget = { port, hostHeader: `bench-static.localhost:${port}`, path: '/bench.html' };
  await measure('static file via edge', 'closed', staticTarget, { connections: 50 }, edgePid);
  await measure('static file via edge, br', 'closed', { ...staticTarget, headers: { 'accept-encoding': 'gzip, deflate, br' } }, { connections: 50 }, edgePid);
  if (!STATIC_ONLY) await nodeCases(edgePid, measure);
} finally {
  await direct?.stop();
  await h.close();
}

async function nodeCases(edgePid, measure) {
  await deploy('bench-node', await sourceTar(join(FIXTURES, 'node-echo')));
  const directPort = await testing.freePort();
  direct = testing.startProcess(process.execPath, [join(FIXTURES, 'node-echo/server.js')], { env: { PATH: process.env.PATH, PORT: String(directPort) } });
  await testing.waitFor(() => fetch(`http://127.0.0.1:${directPort}/x`).then((r) => r.ok), { timeoutMs: 10_000 });
  const appPid = direct.child.pid;
  const via = { port, hostHeader: `bench-node.localhost:${port}`, path: '/x' };
  const dir = { port: directPort, hostHeader: `127.0.0.1:${directPort}`, path: '/x' };
  for (let i = 0; i < PAIRS; i++) {
    await measure('Node app direct', 'closed', dir, { connections: 50 }, appPid);
    await measure('Node app via edge', 'closed', via, { connections: 50 }, edgePid);
  }
  // (b) a fixed offered load both paths sustain: half of the slowest proxied closed-loop rate
  // of this run, rounded down to 500/s (RATE overrides).
  rate = Number(
    process.env.RATE ?? Math.max(500, Math.floor((0.5 * Math.min(...rows.filter((r) => r.name === 'Node app via edge').map((r) => r.rps))) / 500) * 500),
  );
  for (let i = 0; i < PAIRS; i++) {
    await measure('Node app direct', 'rate', dir, { connections: 50, rate }, appPid);
    await measure('Node app via edge', 'rate', via, { connections: 50, rate }, edgePid);
  }
  for (let i = 0; i < PAIRS; i++) {
    await measure('Node app direct', 'closed', dir, { connections: 1 }, appPid);
    await measure('Node app via edge', 'closed', via, { connections: 1 }, edgePid);
  }
}

const ms = (x) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(3));
console.log(
  `\nedge: ${DURATION} s per case, ${PAIRS} alternating pair(s) per comparison, ${process.version}, ${cpus().length} cores (load generator on the same machine), load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
console.log('closed = closed loop (each connection sends again as soon as answered: saturation); rate = fixed offered load over all connections\n');
console.log('| case | mode | connections | offered/s | requests/s | p50 ms | p90 ms | p99 ms | late | non-2xx | errors | CPU µs/request | load1 |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.mode} | ${r.connections} | ${r.offered ?? ''} | ${Math.round(r.rps)} | ${ms(r.p50)} | ${ms(r.p90)} | ${ms(r.p99)} | ${r.late} | ${r.non2xx} | ${r.errors} | ${r.cpuUsPerRequest?.toFixed(1) ?? ''} | ${r.load1.toFixed(2)} |`,
  );
console.log('(CPU µs/request: the edge process for "via edge" rows, the app process for "direct" rows)');

/** Per A/B pair (direct, then via edge): the differences; the figure is their median. */
function overhead(mode, connections, key) {
  const d = rows.filter((r) => r.name === 'Node app direct' && r.mode === mode && r.connections === connections);
  const v = rows.filter((r) => r.name === 'Node app via edge' && r.mode === mode && r.connections === connections);
  return median(v.map((x, i) => x[key] - d[i][key]));
}
const pick = (name, mode, connections, key) =>
  median(rows.filter((r) => r.name === name && r.mode === mode && r.connections === connections).map((r) => r[key]));
const result = {
  staticRps: pick('static file via edge', 'closed', 50, 'rps'),
  staticP99: pick('static file via edge', 'closed', 50, 'p99'),
  staticBrRps: pick('static file via edge, br', 'closed', 50, 'rps'),
  staticBrP99: pick('static file via edge, br', 'closed', 50, 'p99'),
  proxiedRps: pick('Node app via edge', 'closed', 50, 'rps'),
  proxiedP99: pick('Node app via edge', 'closed', 50, 'p99'),
  directRps: pick('Node app direct', 'closed', 50, 'rps'),
  directP99: pick('Node app direct', 'closed', 50, 'p99'),
  overheadP50Saturated: overhead('closed', 50, 'p50'),
  overheadP99Saturated: overhead('closed', 50, 'p99'),
  rate,
  overheadP50AtRate: overhead('rate', 50, 'p50'),
  overheadP99AtRate: overhead('rate', 50, 'p99'),
  proxiedP99AtRate: pick('Node app via edge', 'rate', 50, 'p99'),
  directP99AtRate: pick('Node app direct', 'rate', 50, 'p99'),
  overheadP50At1: overhead('closed', 1, 'p50'),
  overheadP99At1: overhead('closed', 1, 'p99'),
  edgeCpuUsPerProxiedRequest: pick('Node app via edge', 'closed', 50, 'cpuUsPerRequest'),
  appCpuUsPerRequest: pick('Node app direct', 'closed', 50, 'cpuUsPerRequest'),
};
console.log('');
if (!STATIC_ONLY) {
  console.log(
    `(a) proxy overhead at saturation, 50 connections (closed loop): p50 +${ms(result.overheadP50Saturated)} ms, p99 +${ms(result.overheadP99Saturated)} ms — mostly the proxy's throughput cost (p50 ≈ 50 / requests/s)`,
  );
  console.log(
    `(b) proxy overhead at a fixed ${rate} requests/s, 50 connections: p50 +${ms(result.overheadP50AtRate)} ms, p99 +${ms(result.overheadP99AtRate)} ms — the latency the proxy adds to a request (issue target: p50 under 1 ms)`,
  );
  console.log(`(c) proxy overhead at 1 connection: p50 +${ms(result.overheadP50At1)} ms, p99 +${ms(result.overheadP99At1)} ms`);
  console.log(`edge CPU per proxied request ${result.edgeCpuUsPerProxiedRequest?.toFixed(1)} µs (the app's own: ${result.appCpuUsPerRequest?.toFixed(1)} µs)`);
}
// `pnpm bench` (bench/run.mjs) reads the figures from here.
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({ ...result, rows }));
