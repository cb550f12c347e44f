// The edge's data planes against nginx configured by hand, in the same run (issue 19, part 2):
//   - the app directly (its port, the one the runtime sandbox forwards), nginx as a Dokku/Kamal-style
//     peer (1 worker, keep-alive upstream to that SAME port), Slipway with the nginx plane, Slipway
//     with the Node plane (EDGE_DATA_PLANE=node: the Node edge alone), proxied and static;
//   - once with the runtime sandbox on (what users run; pasta caps the app) and once off (the
//     proxies themselves compared).
// wrk -t1 -c50 (keep-alive), RUNS runs of DURATION s per row, interleaved; medians printed with the
// load average. Run: pnpm nx run-many -t build && node bench/edge/planes.mjs
// Env: DURATION (5), RUNS (3), SANDBOX_MODES (on,off), CONNECTIONS (50), BENCH_RESULT_FILE.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNginxAndWrk, head, median, startPeer, stopChild, workersOf, wrk } from './wrk.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testing = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));
const { FIXTURES, sourceTar } = testing;
const DURATION = Number(process.env.DURATION ?? 5);
const RUNS = Number(process.env.RUNS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const MODES = (process.env.SANDBOX_MODES ?? 'on,off').split(',');
ensureNginxAndWrk();

/** One wrk run of this bench's shape; `proxyPids` for the proxy's CPU per request. */
const measure = (port, host, path, proxyPids) => wrk(port, host, path, { connections: CONNECTIONS, duration: DURATION, proxyPids });

const rows = [];
function record(mode, name, kind, result) {
  rows.push({ mode, name, kind, ...result, load1: loadavg()[0] });
}

async function phase(mode) {
  const h = await testing.DeployHarness.create('bench-planes');
  const dir = await mkdtemp(join(tmpdir(), 'slipway-bench-planes-'));
  const env = { RUNTIME_SANDBOX: mode };
  let peer;
  try {
    const nginxPort = await testing.freePort();
    const edge = await h.startEdge(nginxPort, { ...env, LOG_LEVEL: 'warn', EDGE_DATA_PLANE: 'nginx' });
    await h.startWorker({ ...env, EDGE_INTERNAL_URL: `http://127.0.0.1:${nginxPort}`, APPS_DOMAIN: `localhost:${nginxPort}` });
    const page = `<!doctype html><title>bench</title>${'<p>slipway edge benchmark</p>'.repeat(60)}`;
    const deploy = async (slug, source) => {
      const applicationId = await h.createApplication({ slug });
      const row = await h.waitForFinal(await h.deploy(applicationId, source), 180_000);
      if (row.status !== 'succeeded') throw new Error(JSON.stringify(row.error));
      await testing.waitFor(() => /^server: nginx/im.test(head(nginxPort, `${slug}.localhost:${nginxPort}`, '/')), {
        timeoutMs: 15_000,
        what: `${slug} on nginx`,
      });
      return applicationId;
    };
    const staticId = await deploy('bench-static', await sourceTar(join(FIXTURES, 'static-site'), { 'bench.html': page }));
    const nodeId = await deploy('bench-node', await sourceTar(join(FIXTURES, 'node-echo')));
    // The app's own port (pasta-forwarded with the sandbox on): the live slot in the plane's state.
    const state = join(h.home, 'runtime', 'nginx');
    const slots = JSON.parse(await readFile(join(state, 'slots.json'), 'utf8'))[nodeId];
    const onB = await readFile(join(state, 'slot-b', nodeId.replace(/-/g, ''))).then(
      () => true,
      () => false,
    );
    const appPort = onB ? slots.b : slots.a;
    const releaseId = (await h.pg.query('SELECT live_release_id FROM applications WHERE id = $1', [staticId])).rows[0].live_release_id;
    const peerPort = await testing.freePort();
    peer = await startPeer(dir, peerPort, { appPort, staticRoot: join(h.home, 'runtime', 'releases', releaseId) });
    const peerWorkers = () => workersOf(peer.pid);
    const planeWorkers = () => workersOf(Number(readFileSync(join(state, 'nginx.pid'), 'utf8').trim()));
    for (let run = 0; run < RUNS; run++) {
      record(mode, 'the app directly', 'proxied', measure(appPort, `127.0.0.1:${appPort}`, '/x'));
      record(mode, 'nginx peer (by hand)', 'proxied', measure(peerPort, 'app.peer', '/x', peerWorkers));
      record(mode, 'Slipway, nginx plane', 'proxied', measure(nginxPort, `bench-node.localhost:${nginxPort}`, '/x', planeWorkers));
      record(mode, 'nginx peer (by hand)', 'static', measure(peerPort, 'static.peer', '/bench.html', peerWorkers));
      record(mode, 'Slipway, nginx plane', 'static', measure(nginxPort, `bench-static.localhost:${nginxPort}`, '/bench.html', planeWorkers));
    }
    // The Node plane: the same deploys served by the Node edge alone (it restarts the app).
    await edge.stop();
    const nodePort = await testing.freePort();
    const nodeEdge = await h.startEdge(nodePort, { ...env, LOG_LEVEL: 'warn', EDGE_DATA_PLANE: 'node' });
    const edgePid = () => [nodeEdge.child.pid];
    await testing.waitFor(() => head(nodePort, `bench-node.localhost:${nodePort}`, '/x').startsWith('HTTP/1.1 200'), {
      timeoutMs: 60_000,
      what: 'the node plane to serve',
    });
    for (let run = 0; run < RUNS; run++) {
      record(mode, 'Slipway, Node plane', 'proxied', measure(nodePort, `bench-node.localhost:${nodePort}`, '/x', edgePid));
      record(mode, 'Slipway, Node plane', 'static', measure(nodePort, `bench-static.localhost:${nodePort}`, '/bench.html', edgePid));
    }
  } finally {
    if (peer) await stopChild(peer, { signal: 'SIGQUIT' });
    await h.close();
    await rm(dir, { recursive: true, force: true });
  }
}

for (const mode of MODES) await phase(mode);

const result = {};
console.log(
  `\nedge planes: wrk -t1 -c${CONNECTIONS}, ${DURATION} s per run, ${RUNS} runs per row (medians), ${cpus().length} cores shared by wrk, the proxies and the app; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
console.log('| runtime sandbox | path | request | req/s (median) | p50 ms | p99 ms | proxy CPU µs/request | runs (req/s) | non-2xx | errors | load1 |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
const keys = [...new Set(rows.map((r) => `${r.mode}|${r.kind}|${r.name}`))];
for (const key of keys) {
  const [mode, kind, name] = key.split('|');
  const rs = rows.filter((r) => r.mode === mode && r.kind === kind && r.name === name);
  const row = {
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    cpuUs: median(rs.map((r) => r.cpuUs)),
  };
  result[key] = row;
  console.log(
    `| ${mode} | ${name} | ${kind} | ${Math.round(row.rps)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${Number.isFinite(row.cpuUs) ? row.cpuUs.toFixed(1) : '—'} | ${rs.map((r) => Math.round(r.rps)).join(' / ')} | ${rs.reduce((n, r) => n + r.non2xx, 0)} | ${rs
      .map((r) => r.errors)
      .filter(Boolean)
      .join('; ')} | ${median(rs.map((r) => r.load1)).toFixed(2)} |`,
  );
}
for (const mode of MODES) {
  for (const kind of ['proxied', 'static']) {
    const peer = result[`${mode}|${kind}|nginx peer (by hand)`];
    const ours = result[`${mode}|${kind}|Slipway, nginx plane`];
    const node = result[`${mode}|${kind}|Slipway, Node plane`];
    if (!peer || !ours) continue;
    const ratio = ours.rps / peer.rps;
    console.log(
      `sandbox ${mode}, ${kind}: Slipway nginx plane ${ratio.toFixed(2)}× the peer's req/s (goal ≥ 0.9×: ${ratio >= 0.9 ? 'met' : 'not met'}), p99 ${ours.p99.toFixed(2)} vs ${peer.p99.toFixed(2)} ms (goal ≤ peer: ${ours.p99 <= peer.p99 ? 'met' : `not met, +${(ours.p99 - peer.p99).toFixed(2)} ms`}); nginx CPU per request ${ours.cpuUs.toFixed(1)} vs ${peer.cpuUs.toFixed(1)} µs (${(peer.cpuUs / ours.cpuUs).toFixed(2)}× the peer's efficiency)${node ? `; Node plane ${(node.rps / peer.rps).toFixed(2)}× req/s, ${node.cpuUs.toFixed(1)} µs CPU per request` : ''}`,
    );
  }
}
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({ result, rows }));
