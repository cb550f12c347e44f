// A victim tenant's Node app, requested through the edge (by Host), while nothing else runs (idle),
// while another tenant's build runs eight `setsid` CPU burners inside its build cgroup (Slipway:
// 1.5 CPUs, weight 25), and, as the peer in the same run, while the same eight burners run as
// plain processes of the machine (what a build without limits was: issue 27 measured 5.6×).
// Target: p99 during the build within 2× of idle.
// Run: pnpm nx run-many -t build && node bench/build-limits/run.mjs
//   DURATION=10 (seconds per phase), CONNECTIONS=4, RUNS=1 (phases repeated, medians)
// Real Postgres, Redis, build-worker and edge processes (libs/testing DeployHarness), as root
// (build cgroups need it). Every burner is bounded (150 s) and killed after its phase.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testing = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('@slipway/testing'));
const FIXTURES = join(ROOT, 'tools/hostile/fixtures');
const DURATION = Number(process.env.DURATION ?? 10) * 1000;
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 4);
const RUNS = Number(process.env.RUNS ?? 1);
const BURN = 'const end = Date.now() + 150000; while (Date.now() < end) {}';

const holding = (marker) =>
  readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid)
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, 'latin1').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** CONNECTIONS closed loops of keep-alive requests for DURATION ms: latencies (ms) and failures. */
async function load(port, host) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies = [];
  let failures = 0;
  const end = Date.now() + DURATION;
  const one = () =>
    new Promise((resolve) => {
      const t = performance.now();
      const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { host }, agent, timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - t);
          else failures++;
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        failures++;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) await one();
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { requests: latencies.length, failures, p50: at(0.5), p99: at(0.99), load: loadavg()[0] };
}

const h = await testing.DeployHarness.create('bench-build-limits');
const edgePort = await testing.freePort();
const env = {
  EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`,
  APPS_DOMAIN: `localhost:${edgePort}`,
  RUNTIME_SANDBOX: 'on',
  NODE_TOOLCHAIN_DIR: process.env.SLIPWAY_TEST_TOOLCHAINS ?? '/tmp/slipway-toolchains-test',
};
const phases = { idle: [], build: [], unconfined: [] };
const started = [];
try {
  await h.startEdge(edgePort, { ...env, LOG_LEVEL: 'warn', HEALTH_TIMEOUT_MS: '60000' });
  await h.startWorker(env);
  const victim = await h.createApplication();
  const victimRow = await h.waitForFinal(await h.deploy(victim, await testing.sourceTar(join(FIXTURES, 'victim'))), 300_000);
  if (victimRow.status !== 'succeeded') throw new Error(`the victim did not deploy: ${JSON.stringify(victimRow.error)}`);
  const slug = (await h.pg.query('SELECT slug FROM applications WHERE id = $1', [victim])).rows[0].slug;
  const host = `${slug}.localhost:${edgePort}`;
  await until(async () => (await testing.requestByHost(edgePort, '/', { host })).status === 200, 30_000, 'the victim to answer');
  const attacker = await h.createApplication();
  for (let run = 0; run < RUNS; run++) {
    phases.idle.push(await load(edgePort, host));

    // Another tenant's build with eight setsid burners (the hostile fixture), inside its cgroup.
    const marker = `bench-burner-${process.pid}-${run}`;
    const pkg = readFileSync(join(FIXTURES, 'build-burners/package.json'), 'utf8').replaceAll('BURNER_MARKER', marker);
    const deployment = await h.deploy(attacker, await testing.sourceTar(join(FIXTURES, 'build-burners'), { 'package.json': pkg }));
    await until(() => holding(marker).length >= 8, 120_000, 'the burners to run');
    phases.build.push(await load(edgePort, host));
    const row = await h.waitForFinal(deployment, 300_000);
    const build = row.spec?.buildResources?.find((r) => r.step === 'build');
    phases.build.at(-1).burnerCpuSeconds = build?.cpuSeconds ?? null;
    await until(() => holding(marker).length === 0, 20_000, 'the burners to die with their build');

    // The peer: the same eight burners as plain processes of the machine (a build without limits).
    const peerMarker = `${marker}-unconfined`;
    for (let i = 0; i < 8; i++) started.push(spawn(process.execPath, ['-e', BURN, peerMarker], { stdio: 'ignore', detached: true }));
    await until(() => holding(peerMarker).length >= 8, 10_000, 'the unconfined burners');
    phases.unconfined.push(await load(edgePort, host));
    for (const child of started.splice(0)) child.kill('SIGKILL');
  }
} finally {
  for (const child of started) child.kill('SIGKILL');
  await h.close();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figure = (phase, key) => median(phases[phase].map((r) => r[key]));
const ms = (v) => (v === undefined ? '-' : `${v.toFixed(2)} ms`);
console.log(
  `\nbuild limits: victim app through the edge, ${CONNECTIONS} connections, ${DURATION / 1000} s per phase, ${RUNS} run(s); ${process.version}, ${cpus().length} cores; shared machine`,
);
console.log('| phase | requests | failed | p50 | p99 | p99 ÷ idle p99 | load (1 min) |');
console.log('|---|---|---|---|---|---|---|');
for (const [phase, label] of [
  ['idle', 'idle'],
  ['build', "8 setsid burners in another tenant's build (Slipway: build cgroup)"],
  ['unconfined', 'peer: the same 8 burners unconfined (a build without limits)'],
]) {
  console.log(
    `| ${label} | ${figure(phase, 'requests')} | ${figure(phase, 'failures')} | ${ms(figure(phase, 'p50'))} | ${ms(figure(phase, 'p99'))} | ${(figure(phase, 'p99') / figure('idle', 'p99')).toFixed(2)}× | ${figure(phase, 'load').toFixed(2)} |`,
  );
}
console.log(
  `target: p99 during the build ≤ 2× idle → ${figure('build', 'p99') <= 2 * figure('idle', 'p99') ? '✓' : '✗'}; the burners' build used ${figure('build', 'burnerCpuSeconds') ?? '?'} CPU s in its cgroup`,
);
if (process.env.BENCH_RESULT_FILE) {
  const out = {};
  for (const phase of Object.keys(phases)) for (const key of ['p50', 'p99', 'requests', 'failures']) out[`${phase}.${key}`] = figure(phase, key);
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(out));
}
