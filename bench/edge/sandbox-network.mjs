// The sandbox at kernel speed (issue 34): the hello app (fixtures/node-server) deployed with the
// runtime sandbox on, behind the edge's nginx plane, once per RUNTIME_NETWORK mode (one platform
// each: harness, edge, worker, all running side by side), against the peer: the SAME release
// directory run unsandboxed (`sh -c <start command>` as the runtime runs it with the sandbox off,
// on the release's own Node) behind nginx configured by hand (1 worker, keep-alive upstream 64,
// HTTP/1.1). The peer pays no sandbox network path at all (planes.mjs's peer proxies to the port
// pasta forwards, so both of its sides pay it); the sandboxed app is also capped at RUNTIME_CPUS
// (1 core by default), which a single-threaded Node server barely feels.
// wrk -t1 -c50 keep-alive; each target warmed up for 1 s, then RUNS runs of DURATION s,
// interleaved (every target once per run, the order rotated from run to run); medians, the ratio
// to the peer, the load average, and the figures issue 34 measured before the change. Then the same
// runs at an equal offered load below saturation (LOAD_SHARE of the peer's median req/s, 0.5 by
// default; each connection waits between requests): the latency each path adds when neither side
// is saturated. At saturation wrk's 50 connections make latency ≈ 50 ÷ req/s (Little's law), so
// the saturated p99 mostly restates the req/s ratio; see bench/README.md, "sandbox network".
// One more row per platform splits the gap in two: the peer's own nginx.conf pointed at Slipway's
// sandboxed app (its workers as NGINX_USER, the user the host's table lets dial a sandbox). Against
// the peer it prices the sandbox's path alone (namespace, link, NAT, cgroup); against Slipway's row,
// the edge's nginx config alone. It is a decomposition, not a target: no verdict is given for it.
// Run as root (the sandbox needs it): pnpm nx run-many -t build && node bench/edge/sandbox-network.mjs
// Env: DURATION (10), RUNS (3), CONNECTIONS (50), LOAD_SHARE (0.5), NETWORK_MODES (kernel,pasta; each auto, kernel or
// pasta, passed as RUNTIME_NETWORK to the edge and the worker), BENCH_RESULT_FILE; for decompositions
// (not what `pnpm bench` reports): RUNTIME_CPUS (the app's CPU cap), BENCH_SANDBOX=off (no sandbox at all),
// BENCH_PLATFORM_ENV (`NAME=value,NAME=value` given to the platforms' edge and worker, e.g. EDGE_METRICS=off).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNginxAndWrk, head, median, processTree, startPeer, stopChild, workersOf, wrk } from './wrk.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testing = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));
const DURATION = Number(process.env.DURATION ?? 10);
const RUNS = Number(process.env.RUNS ?? 3);
const LOAD_SHARE = Number(process.env.LOAD_SHARE ?? 0.5);
if (!(LOAD_SHARE > 0 && LOAD_SHARE < 1)) throw new Error(`LOAD_SHARE must be between 0 and 1, not ${process.env.LOAD_SHARE}`);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const NETWORKS = ['auto', 'kernel', 'pasta'];
const MODES = (process.env.NETWORK_MODES ?? 'kernel,pasta').split(',').map((m) => m.trim());
for (const mode of MODES) if (!NETWORKS.includes(mode)) throw new Error(`NETWORK_MODES: "${mode}" is not one of ${NETWORKS.join(', ')}`);
if (process.getuid?.() !== 0) throw new Error('run as root: the runtime sandbox (a user per app, cgroups, pasta) needs it');
const FIXTURE = 'node-server';
const SANDBOXED = (process.env.BENCH_SANDBOX ?? 'on') !== 'off';
const SLUG = 'hello';
const PLATFORM_ENV = Object.fromEntries(
  (process.env.BENCH_PLATFORM_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`BENCH_PLATFORM_ENV: "${pair}" is not NAME=value`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1)];
    }),
);
const PATH = '/';
/**
 * Issue 34's figures, measured before the change (2026-11-27): wrk -t1 -c50 keep-alive, best of 3
 * (not medians), Slipway sandboxed through `pnpm start`'s :8080.
 */
const BEFORE = { slipway: { rps: 39_000, p99: 3.6 }, peer: { rps: 56_500, p99: 3.0 } };
ensureNginxAndWrk();

const slipways = [];
const peer = {};
/** The peer's nginx.conf in front of each platform's sandboxed app (the decomposition rows). */
const splitters = [];
let dir;
let stopping;
/** Everything this bench started, stopped (once, also on SIGINT/SIGTERM: the services run in their own process groups). */
const stopAll = () =>
  (stopping ??= Promise.allSettled([
    peer.nginx && stopChild(peer.nginx, { signal: 'SIGQUIT' }),
    peer.app && stopChild(peer.app.child, { group: true }),
    ...splitters.map((child) => stopChild(child, { signal: 'SIGQUIT' })),
    ...slipways.map((s) => s.h.close()),
  ]).then(() => dir && rm(dir, { recursive: true, force: true })));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

/**
 * One platform for one network mode (harness, edge with the nginx plane, worker), the hello app
 * deployed on it with the sandbox on. Listed in `slipways` before anything starts, so a failure
 * or a signal part-way stops what did start.
 */
async function startSlipway(mode) {
  const s = { mode, h: await testing.DeployHarness.create(`bench-net-${mode}`) };
  slipways.push(s);
  const env = {
    RUNTIME_SANDBOX: process.env.BENCH_SANDBOX ?? 'on',
    RUNTIME_NETWORK: mode,
    ...(process.env.RUNTIME_CPUS ? { RUNTIME_CPUS: process.env.RUNTIME_CPUS } : {}),
    ...PLATFORM_ENV,
  };
  s.port = await testing.freePort();
  s.edge = await s.h.startEdge(s.port, { ...env, LOG_LEVEL: 'warn', EDGE_DATA_PLANE: 'nginx' });
  await s.h.startWorker({ ...env, EDGE_INTERNAL_URL: `http://127.0.0.1:${s.port}`, APPS_DOMAIN: `localhost:${s.port}` });
  s.applicationId = await s.h.createApplication({ slug: SLUG });
  const row = await s.h.waitForFinal(await s.h.deployFixture(s.applicationId, FIXTURE), 180_000);
  if (row.status !== 'succeeded') throw new Error(`the ${mode} deploy failed: ${JSON.stringify(row.error)}`);
  s.host = `${SLUG}.localhost:${s.port}`;
  await testing.waitFor(() => /^HTTP\/1\.1 200[^]*^server: nginx/im.test(head(s.port, s.host, PATH)), { timeoutMs: 30_000, what: `${s.host} served by nginx` });
}

/**
 * Where the platform's nginx reaches the app: the live slot's upstream in its rendered config
 * (127.0.0.1:… is pasta's forward; an address of the app's own, e.g. 10.213.…, the veth pair).
 * Printed, so a table says which path each mode really measured (`auto` may fall back to pasta).
 */
function upstreamOf({ h, applicationId }) {
  const state = join(h.home, 'runtime', 'nginx');
  const id = applicationId.replace(/-/g, '');
  try {
    const slot = existsSync(join(state, 'slot-b', id)) ? `app_${id}_b` : `app_${id}`;
    return new RegExp(`upstream ${slot} \\{\\s*server (\\S+)`).exec(readFileSync(join(state, 'nginx.conf'), 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The peer's app: the release Slipway runs, started as the runtime starts it with the sandbox off
 * (`sh -c <start command>` in the release directory, the release's Node first on PATH, PORT and
 * NODE_ENV=production), as a plain process of the machine: no user of its own, cgroup or pasta.
 * In `peer` before it is waited for, so a failure or a signal stops it too.
 */
async function startPlainApp({ h, applicationId }, port) {
  const { rows } = await h.pg.query('SELECT r.id, r.spec FROM releases r JOIN applications a ON a.live_release_id = r.id WHERE a.id = $1', [applicationId]);
  const { id, spec } = rows[0];
  // The runtime's toolchain layout (libs/toolchains node-toolchains.ts); none there: the platform's Node, as in the sandbox.
  const toolchain = join(h.workerEnv().NODE_TOOLCHAIN_DIR, 'node', String(spec.nodeVersion));
  const bin = existsSync(join(toolchain, 'bin', 'node')) ? `${join(toolchain, 'bin')}:` : '';
  const env = { HOME: '/tmp', NODE_ENV: 'production', PATH: `${bin}/usr/local/bin:/usr/bin:/bin`, PORT: String(port) };
  const child = spawn('sh', ['-c', spec.commands?.start ?? 'npm start'], {
    cwd: join(h.home, 'runtime', 'releases', id),
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  peer.app = { child, node: bin ? `Node ${spec.nodeVersion} (the release's)` : `the platform's Node` };
  await testing.waitFor(() => head(port, `127.0.0.1:${port}`, PATH).startsWith('HTTP/1.1 200'), { timeoutMs: 30_000, what: 'the unsandboxed app' });
}

const rows = [];
/** The equal-load runs: `delayMs` per connection between requests, the same for every target. */
const paced = { rows: [], delayMs: 0 };
const loadStart = loadavg();
const targets = [];
try {
  for (const mode of MODES) await startSlipway(mode);
  dir = await mkdtemp(join(tmpdir(), 'slipway-bench-net-'));
  const appPort = await testing.freePort();
  await startPlainApp(slipways[0], appPort);
  const peerPort = await testing.freePort();
  peer.nginx = await startPeer(dir, peerPort, { appPort });
  targets.push({
    key: 'peer',
    name: 'peer: the app unsandboxed behind nginx by hand',
    port: peerPort,
    host: 'app.peer',
    upstream: `127.0.0.1:${appPort}`,
    cpu: { nginx: () => workersOf(peer.nginx.pid), app: () => processTree(peer.app.child.pid) },
  });
  for (const s of slipways) {
    const upstream = upstreamOf(s);
    const appPids = await testing.processesWith('environ', `PORT=${upstream.split(':')[1]}\0`);
    const master = () => Number(readFileSync(join(s.h.home, 'runtime', 'nginx', 'nginx.pid'), 'utf8'));
    targets.push({
      key: s.mode,
      name: `Slipway, ${SANDBOXED ? 'sandboxed' : 'NOT sandboxed (BENCH_SANDBOX=off)'}, RUNTIME_NETWORK=${s.mode}`,
      port: s.port,
      host: s.host,
      upstream,
      cpu: { nginx: () => workersOf(master()), app: () => appPids, edge: () => [s.edge.child.pid] },
    });
    const splitDir = join(dir, `peer-nginx-${s.mode}`);
    await mkdir(splitDir, { mode: 0o755 });
    const splitPort = await testing.freePort();
    const splitter = await startPeer(splitDir, splitPort, { upstream, user: PLATFORM_ENV.NGINX_USER ?? 'slipway-edge' });
    splitters.push(splitter);
    targets.push({
      key: `split-${s.mode}`,
      split: true,
      name: `decomposition: the peer's nginx.conf → Slipway's ${SANDBOXED ? 'sandboxed' : 'unsandboxed'} app (RUNTIME_NETWORK=${s.mode})`,
      port: splitPort,
      host: 'app.peer',
      upstream,
      cpu: { nginx: () => workersOf(splitter.pid), app: () => appPids },
    });
  }
  // JIT and connection pools warm before anything counts (a cold first run would be one of RUNS = 1).
  for (const t of targets) wrk(t.port, t.host, PATH, { connections: CONNECTIONS, duration: 1 });
  // Each run starts one target further on, so no target always runs first or right after the others
  // (with 3 targets and RUNS=3, each takes each place once).
  for (let run = 1; run <= RUNS; run++) {
    const order = targets.map((_, i) => targets[(i + run - 1) % targets.length]);
    for (const t of order)
      rows.push({ run, target: t.key, ...wrk(t.port, t.host, PATH, { connections: CONNECTIONS, duration: DURATION, cpu: t.cpu }), load1: loadavg()[0] });
  }
  // The same offered load for every target: LOAD_SHARE of what the peer carried at saturation.
  const offered = LOAD_SHARE * median(rows.filter((r) => r.target === 'peer').map((r) => r.rps));
  paced.delayMs = Math.max(1, Math.round((CONNECTIONS * 1000) / offered));
  for (let run = 1; run <= RUNS; run++) {
    const order = targets.map((_, i) => targets[(i + run - 1) % targets.length]);
    for (const t of order)
      paced.rows.push({
        run,
        target: t.key,
        ...wrk(t.port, t.host, PATH, { connections: CONNECTIONS, duration: DURATION, delayMs: paced.delayMs }),
        load1: loadavg()[0],
      });
  }
} finally {
  await stopAll();
}

const result = {};
for (const t of targets) {
  const rs = rows.filter((r) => r.target === t.key);
  const cpu = Object.fromEntries(['nginx', 'app', 'softirq', 'edge'].map((k) => [k, median(rs.map((r) => r.cpu?.[k]))]));
  result[t.key] = {
    cpu,
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    runs: rs.map((r) => r.rps),
    non2xx: rs.reduce((n, r) => n + r.non2xx, 0),
    errors: rs.map((r) => r.errors).filter(Boolean),
    load1: median(rs.map((r) => r.load1)),
    upstream: t.upstream,
  };
  const ps = paced.rows.filter((r) => r.target === t.key);
  result[t.key].paced = { rps: median(ps.map((r) => r.rps)), p50: median(ps.map((r) => r.p50)), p99: median(ps.map((r) => r.p99)), p99s: ps.map((r) => r.p99) };
}
const base = result.peer;
const ms = (x) => x.toFixed(2);
const verdict = (r) => `${(r.rps / base.rps).toFixed(2)}× (≥ 0.9×: ${r.rps / base.rps >= 0.9 ? 'met' : 'not met'})`;
const p99Verdict = (r) => (r.p99 <= base.p99 ? 'yes' : `no, +${ms(r.p99 - base.p99)} ms`);
const loadText = (l) => l.map((x) => x.toFixed(2)).join(' ');
console.log(
  `\nsandbox network (issue 34): the hello app (fixtures/${FIXTURE}, GET ${PATH}), wrk -t1 -c${CONNECTIONS} keep-alive, ${DURATION} s per run, ${RUNS} run(s) per row interleaved (medians); the peer's app on ${peer.app?.node}; ${cpus().length} cores shared by wrk, nginx, the app and pasta; load average ${loadText(loadStart)} at the start, ${loadText(loadavg())} at the end${process.env.BENCH_PLATFORM_ENV ? `; platforms run with ${process.env.BENCH_PLATFORM_ENV}` : ''}`,
);
console.log(
  '| target | nginx reaches the app at | req/s (median) | runs (req/s) | p50 ms | p99 ms | req/s ÷ peer (goal ≥ 0.9×) | p99 ≤ peer | CPU µs/request: nginx · app · kernel softirq · edge | non-2xx | errors | load1 (median) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const t of targets) {
  const r = result[t.key];
  const vsPeer = t.key === 'peer' ? ['—', '—'] : t.split ? [`${(r.rps / base.rps).toFixed(2)}× (decomposition)`, '—'] : [verdict(r), p99Verdict(r)];
  const us = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
  console.log(
    `| ${t.name} | ${r.upstream} | ${Math.round(r.rps)} | ${r.runs.map(Math.round).join(' / ')} | ${ms(r.p50)} | ${ms(r.p99)} | ${vsPeer[0]} | ${vsPeer[1]} | ${us(r.cpu.nginx)} · ${us(r.cpu.app)} · ${us(r.cpu.softirq)} · ${us(r.cpu.edge)} | ${r.non2xx} | ${r.errors.join('; ')} | ${r.load1.toFixed(2)} |`,
  );
}
console.log(
  `| before the change (issue 34, 2026-11-27, best of 3): Slipway sandboxed through :8080 | pasta | ${BEFORE.slipway.rps} | — | — | ${BEFORE.slipway.p99} | ${(BEFORE.slipway.rps / BEFORE.peer.rps).toFixed(2)}× | no | — | — | — | — |`,
);
console.log(
  `| before the change (issue 34, 2026-11-27, best of 3): the same app behind nginx by hand | — | ${BEFORE.peer.rps} | — | — | ${BEFORE.peer.p99} | — | — | — | — | — | — |`,
);
for (const t of targets.filter((x) => x.key !== 'peer' && !x.split)) {
  const r = result[t.key];
  // A veth pair gives the app an address of its own: on loopback, nginx still goes through pasta's forward.
  const onPasta = t.key !== 'pasta' && r.upstream.startsWith('127.') ? " — nginx reaches this app on loopback: pasta's path, not the kernel's" : '';
  console.log(
    `RUNTIME_NETWORK=${t.key} (nginx → ${r.upstream}): ${verdict(r)} the peer's req/s, p99 ${ms(r.p99)} vs ${ms(base.p99)} ms (≤ peer: ${p99Verdict(r)})${onPasta}`,
  );
}
console.log(
  `\nthe same, at an equal offered load below saturation: each of the ${CONNECTIONS} connections waits ${paced.delayMs} ms between requests (about ${Math.round((CONNECTIONS * 1000) / paced.delayMs)} req/s offered, ${LOAD_SHARE} of the peer's median above), ${RUNS} run(s) of ${DURATION} s interleaved (medians)`,
);
console.log('| target | req/s carried | p50 ms | p99 ms | runs (p99 ms) | p99 ≤ peer at this load |');
console.log('|---|---|---|---|---|---|');
for (const t of targets) {
  const r = result[t.key].paced;
  const ok = t.key === 'peer' ? '—' : r.p99 <= base.paced.p99 ? 'yes' : `no, +${ms(r.p99 - base.paced.p99)} ms`;
  console.log(`| ${t.name} | ${Math.round(r.rps)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.p99s.map(ms).join(' / ')} | ${ok} |`);
}
if (process.env.BENCH_RESULT_FILE)
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({ result, rows, paced, load: { start: loadStart, end: loadavg() }, before: BEFORE }));
