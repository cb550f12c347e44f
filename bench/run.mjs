// `pnpm bench`: builds (the root script does), runs every benchmark under bench/ as its own process
// (each starts and removes what it needs: databases, Redis prefixes, services), takes the median
// of each figure over the runs, prints ONE table and writes bench/results/latest.json.
// Each script hands its figures over as JSON in BENCH_RESULT_FILE (bench/deploy-accept writes
// bench/results/deploy-accept.json itself); its own table goes to bench/results/logs/<name>.log.
// Env: BENCH_QUICK=1 (shorter runs, one run each: a smoke test of the figures, ~3-4 min),
//      BENCH_RUNS (runs of the load-generator benches; default 3, quick 1), BENCH_ONLY=name,name.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 1 : 3));
const ONLY = process.env.BENCH_ONLY?.split(',');
const RESULTS = join(ROOT, 'bench/results');
const LOGS = join(RESULTS, 'logs');

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return undefined;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Each bench: its script, environment for full and quick runs, how many runs (load-generator
 * benches are repeated; the ones that already take medians internally run once), and its figures:
 * [figure, unit, target, value(result), peer value(result)?, higher is better?].
 */
const BENCHES = [
  {
    name: 'deploy-accept',
    script: 'bench/deploy-accept/run.mjs',
    env: QUICK ? { BENCH_REQUESTS: '100' } : {},
    runs: RUNS,
    read: () => JSON.parse(readFileSync(join(RESULTS, 'deploy-accept.json'), 'utf8')),
    figures: [
      ['Deploy API: accept p50, 1 MB, 20 concurrent (upload excluded: last byte read → 202)', 'ms', '', (r) => r.latency.gatewayAcceptMs.p50],
      ['Deploy API: accept p99, 1 MB, 20 concurrent (upload excluded: last byte read → 202)', 'ms', '< 100', (r) => r.latency.gatewayAcceptMs.p99],
      ['Deploy API: accept p50, 1 MB, 20 concurrent (whole request)', 'ms', '', (r) => r.latency.totalMs.p50],
      ['Deploy API: accept p99, 1 MB, 20 concurrent (whole request)', 'ms', '', (r) => r.latency.totalMs.p99],
      ["Deploy API: accept p99, 1 MB, 20 concurrent (after the client's last write returned)", 'ms', '', (r) => r.latency.afterUploadMs.p99],
      ['Deploy API: accepted deploys/s, 1 MB, 20 concurrent', '/s', '', (r) => r.latency.throughputPerSecond],
      ['Deploy API: gateway RSS growth accepting 20 MB', 'MB', 'flat', (r) => r.memory.uploads[0]?.growthMB],
      ['Deploy API: gateway RSS growth accepting 200 MB', 'MB', 'flat', (r) => r.memory.uploads[1]?.growthMB],
    ],
  },
  {
    name: 'deploy-queue',
    script: 'bench/deploy-queue/run.mjs',
    env: QUICK ? { SUSTAIN_SECONDS: '20' } : { SUSTAIN_SECONDS: '45' },
    runs: 1,
    figures: [
      ['Deploy queue: deploys/minute sustained, 20 apps, 2 workers (static)', '/min', '', (r) => r.deploysPerMinute],
      ['Deploy queue: drain 20 deploys, 1 worker', 's', '', (r) => r['drainMs.1'] / 1000],
      ['Deploy queue: drain 20 deploys, 2 workers', 's', '', (r) => r['drainMs.2'] / 1000],
    ],
  },
  {
    // Plain FIFO (DEPLOY_QUEUE_ORDER=fifo) as the peer, in the same run.
    name: 'fair-queue',
    script: 'bench/fair-queue/run.mjs',
    env: QUICK ? { BUILD_SECONDS: '5', ATTACKER_APPS: '3' } : { BUILD_SECONDS: '10', ATTACKER_APPS: '4' },
    runs: 1,
    figures: [
      [
        "Fair queue: victim owner's queue wait behind an attacker's builds (1 slot)",
        's',
        '≤ 1 build',
        (r) => r['fair.victimQueuedMs'] / 1000,
        (r) => r['fifo.victimQueuedMs'] / 1000,
        false,
      ],
      ["Fair queue: the attacker's build it waited for", 's', '', (r) => r['fair.attackerBuildMs'] / 1000, (r) => r['fifo.attackerBuildMs'] / 1000, false],
    ],
    peerName: 'plain FIFO (DEPLOY_QUEUE_ORDER=fifo)',
  },
  {
    name: 'time-to-live',
    script: 'bench/time-to-live/time-to-live.mjs',
    env: { RUNS: QUICK ? '1' : '3' },
    runs: 1,
    figures: [
      ['Time to live: static site (median)', 's', '< 3', (r) => r['static-site.coldMs'] / 1000],
      ['Time to live: Node server, cold cache (median)', 's', '', (r) => r['node-server.coldMs'] / 1000],
      ['Time to live: Node server, warm cache (median)', 's', '< 15', (r) => r['node-server.warmMs'] / 1000],
      ['Time to live: Next.js starter, cold (median)', 's', '≤ 60', (r) => r['next-starter.coldMs'] / 1000],
      ['Time to live: Next.js starter, warm redeploy (median)', 's', '≤ 25', (r) => r['next-starter.warmMs'] / 1000],
      ['Time to live: Next.js starter, package + release (median)', 's', '≤ 5', (r) => r['next-starter.packageReleaseMs'] / 1000],
      ['Time to live: Next.js starter, artifact', 'MB', '≤ 30', (r) => r['next-starter.artifactBytes'] / 1024 / 1024],
      ['Time to live: Vite starter with lockfile, warm (median)', 's', '≤ 10', (r) => r['vite-starter.warmMs'] / 1000],
      ['Time to live: create-turbo monorepo, apps/web (Next.js), cold (median)', 's', '', (r) => r['turbo-web.coldMs'] / 1000],
      ['Time to live: create-turbo monorepo, apps/web (Next.js), warm (median)', 's', '', (r) => r['turbo-web.warmMs'] / 1000],
      ['Time to live: create-turbo monorepo, apps/web, artifact', 'MB', '', (r) => r['turbo-web.artifactBytes'] / 1024 / 1024],
      ['Time to live: Angular SSR starter (ng new --ssr), cold (median)', 's', '', (r) => r['angular-ssr.coldMs'] / 1000],
      ['Time to live: Angular SSR starter (ng new --ssr), warm (median)', 's', '', (r) => r['angular-ssr.warmMs'] / 1000],
    ],
  },
  {
    name: 'edge',
    script: 'bench/edge/edge.mjs',
    env: { DURATION: QUICK ? '3' : '5' },
    runs: RUNS,
    figures: [
      ['Edge: static file, 50 connections', 'req/s', '', (r) => r.staticRps],
      ['Edge: static file p99, 50 connections', 'ms', '', (r) => r.staticP99],
      ['Edge: proxied Node app, 50 connections (saturated)', 'req/s', '', (r) => r.proxiedRps, (r) => r.directRps],
      ['Edge: proxied Node app p99, 50 connections (saturated)', 'ms', '', (r) => r.proxiedP99, (r) => r.directP99, false],
      ['Edge: proxy overhead p50, 50 connections at a fixed load both sustain (b)', 'ms', '< 1', (r) => r.overheadP50AtRate],
      ['Edge: proxy overhead p99, 50 connections at a fixed load both sustain (b)', 'ms', '', (r) => r.overheadP99AtRate],
      ['Edge: proxy overhead p50, 50 connections saturated (a; throughput cost, see bench/README.md)', 'ms', '', (r) => r.overheadP50Saturated],
      ['Edge: proxy overhead p50, 1 connection', 'ms', '', (r) => r.overheadP50At1],
      ['Edge: edge CPU per proxied request (peer: the app per request)', 'µs', '', (r) => r.edgeCpuUsPerProxiedRequest, (r) => r.appCpuUsPerRequest, false],
    ],
    peerName: 'the app hit directly',
  },
  {
    // nginx configured by hand (Dokku/Kamal-style) as the peer, in the same run; medians inside.
    name: 'edge-planes',
    script: 'bench/edge/planes.mjs',
    env: { DURATION: QUICK ? '3' : '5', RUNS: QUICK ? '1' : '3' },
    runs: 1,
    figures: ['on', 'off'].flatMap((mode) =>
      ['proxied', 'static'].flatMap((kind) => {
        const of = (name) => (r) => r.result[`${mode}|${kind}|${name}`];
        const label = `Edge planes (sandbox ${mode}): ${kind}`;
        return [
          [`${label}, Slipway nginx plane`, 'req/s', '≥ 0.9× peer', (r) => of('Slipway, nginx plane')(r)?.rps, (r) => of('nginx peer (by hand)')(r)?.rps],
          [`${label}, Slipway nginx plane p99`, 'ms', '≤ peer', (r) => of('Slipway, nginx plane')(r)?.p99, (r) => of('nginx peer (by hand)')(r)?.p99, false],
          [`${label}, Slipway Node plane`, 'req/s', '', (r) => of('Slipway, Node plane')(r)?.rps, (r) => of('nginx peer (by hand)')(r)?.rps],
        ];
      }),
    ),
    peerName: 'nginx 1.22 by hand (1 worker, keep-alive upstream)',
  },
  {
    // Issue 34: the hello app sandboxed (RUNTIME_NETWORK=kernel, then pasta) against the same release
    // run unsandboxed behind nginx by hand, interleaved in the same run; medians inside.
    name: 'sandbox-network',
    script: 'bench/edge/sandbox-network.mjs',
    env: { DURATION: QUICK ? '2' : '10', RUNS: QUICK ? '1' : '3', NETWORK_MODES: 'kernel,pasta' },
    runs: 1,
    figures: [
      ['Sandbox network: hello app sandboxed, RUNTIME_NETWORK=kernel', 'req/s', '≥ 0.9× peer', (r) => r.result.kernel?.rps, (r) => r.result.peer?.rps],
      ['Sandbox network: hello app sandboxed, RUNTIME_NETWORK=kernel, p99', 'ms', '≤ peer', (r) => r.result.kernel?.p99, (r) => r.result.peer?.p99, false],
      [
        'Sandbox network: hello app sandboxed, RUNTIME_NETWORK=kernel, p99 at an equal load below saturation (half the peer’s req/s)',
        'ms',
        '≤ peer',
        (r) => r.result.kernel?.paced?.p99,
        (r) => r.result.peer?.paced?.p99,
        false,
      ],
      [
        'Sandbox network, decomposition: the peer’s own nginx.conf in front of the sandboxed app (RUNTIME_NETWORK=kernel): the sandbox’s path alone',
        'req/s',
        '',
        (r) => r.result['split-kernel']?.rps,
        (r) => r.result.peer?.rps,
      ],
      ['Sandbox network: hello app sandboxed, RUNTIME_NETWORK=pasta', 'req/s', '', (r) => r.result.pasta?.rps, (r) => r.result.peer?.rps],
      ['Sandbox network: hello app sandboxed, RUNTIME_NETWORK=pasta, p99', 'ms', '', (r) => r.result.pasta?.p99, (r) => r.result.peer?.p99, false],
      ['Sandbox network: machine load average (1 min) during the runs, median', '', '', (r) => r.result.peer?.load1],
    ],
    peerName: 'the same release unsandboxed behind nginx by hand (1 worker, keep-alive upstream)',
  },
  {
    // Issue 34: nginx's own instructions per proxied request (callgrind), Slipway's rendered config
    // against the peer's, and what each part of Slipway's (metrics log, 5xx feed, slot marker,
    // usage log) costs: counted, so the machine's load does not move them.
    name: 'nginx-instructions',
    script: 'bench/edge/nginx-instructions.mjs',
    env: { DURATION: QUICK ? '2' : '6' },
    runs: 1,
    figures: [
      ["nginx instructions per proxied request, Slipway's plane", 'instructions', '', (r) => r.rows[1]?.perRequest, (r) => r.rows[0]?.perRequest, false],
      [
        "nginx instructions per proxied request, Slipway's plane without metrics log, 5xx feed, slot marker, usage log",
        'instructions',
        '',
        (r) => r.rows.at(-1)?.perRequest,
        (r) => r.rows[0]?.perRequest,
        false,
      ],
    ],
    peerName: 'the peer of sandbox-network (nginx by hand, 1 worker, keep-alive upstream), same app on loopback',
  },
  {
    // Metrics collection on vs off (EDGE_METRICS), both data planes, interleaved in the same run.
    name: 'edge-metrics',
    script: 'bench/edge/metrics.mjs',
    env: { DURATION: QUICK ? '3' : '5', RUNS: QUICK ? '1' : '3' },
    runs: 1,
    figures: ['nginx', 'node'].flatMap((plane) => [
      [
        `Edge metrics (${plane} plane): proxied req/s, collection on`,
        'req/s',
        '≈ off',
        (r) => r.result[`${plane}|on`]?.rps,
        (r) => r.result[`${plane}|off`]?.rps,
      ],
      [
        `Edge metrics (${plane} plane): proxied p99, collection on`,
        'ms',
        '≈ off',
        (r) => r.result[`${plane}|on`]?.p99,
        (r) => r.result[`${plane}|off`]?.p99,
        false,
      ],
      [
        `Edge metrics (${plane} plane): proxy CPU per request, collection on`,
        'µs',
        '',
        (r) => r.result[`${plane}|on`]?.cpuUs,
        (r) => r.result[`${plane}|off`]?.cpuUs,
        false,
      ],
    ]),
    peerName: 'the same edge with EDGE_METRICS=off',
  },
  {
    // Another tenant's build with eight setsid CPU burners vs. the same burners unconfined, same run.
    name: 'build-limits',
    script: 'bench/build-limits/run.mjs',
    env: { DURATION: QUICK ? '5' : '10', RUNS: QUICK ? '1' : '3' },
    runs: 1,
    figures: [
      ['Build limits: victim app p50, idle', 'ms', '', (r) => r['idle.p50']],
      ['Build limits: victim app p99, idle', 'ms', '', (r) => r['idle.p99']],
      ["Build limits: victim app p50, 8 setsid burners in another tenant's build", 'ms', '', (r) => r['build.p50'], (r) => r['unconfined.p50'], false],
      [
        "Build limits: victim app p99, 8 setsid burners in another tenant's build",
        'ms',
        '≤ 2× idle p99',
        (r) => r['build.p99'],
        (r) => r['unconfined.p99'],
        false,
      ],
      ['Build limits: victim requests failed during the build', '', '0', (r) => r['build.failures']],
    ],
    peerName: 'the same 8 burners unconfined (a build without limits)',
  },
  {
    name: 'auth',
    script: 'bench/auth/run.mjs',
    env: { BENCH_SECONDS: QUICK ? '3' : '5' },
    runs: RUNS,
    figures: ['GET /get-session, many visitors', 'GET /token, many visitors', 'GET /get-session', 'GET /token', 'POST /sign-in/email']
      .flatMap((title) => {
        const ours = (rows) => rows.find((x) => x.title === title && x.target.startsWith('slipway'));
        const theirs = (rows) => rows.find((x) => x.title === title && !x.target.startsWith('slipway'));
        const target = title === 'POST /sign-in/email' ? '' : '≥ 10× peer';
        const figures = [
          [`Sign-in: ${title}`, 'req/s', target, (r) => ours(r)?.rps, (r) => theirs(r)?.rps],
          [`Sign-in: ${title} p99`, 'ms', title.endsWith('many visitors') ? '< peer' : '', (r) => ours(r)?.p99, (r) => theirs(r)?.p99, false],
        ];
        if (title === 'POST /sign-in/email') {
          // Equal hashing: Better Auth configured with bcrypt at our cost (bench/auth/better-auth-server.mjs).
          const equal = (rows) => rows.find((x) => x.title === title && !x.target.startsWith('slipway') && x.target.includes('bcrypt'));
          figures.push([`Sign-in: ${title}, both bcrypt 10`, 'req/s', '≥ peer', (r) => ours(r)?.rps, (r) => equal(r)?.rps]);
        }
        return figures;
      })
      .concat([
        // Memory of the per-visitor limiter (no peer figure: Better Auth's memory store is unbounded).
        [
          'Sign-in: session-read limiter heap after 1M distinct visitors',
          'MB',
          '',
          (r) => r.find((x) => x.title.startsWith('session-read limiter heap'))?.heapMB,
          undefined,
          false,
        ],
      ]),
    peerName: 'Better Auth + jwt()',
  },
  {
    name: 'auth-scale',
    script: 'bench/auth-scale/run.mjs',
    env: QUICK ? { BENCH_SECONDS: '3', TENANTS: '20' } : { BENCH_SECONDS: '5', TENANTS: '100' },
    runs: QUICK ? 1 : 2,
    figures: [
      ['Sign-in: POST /sign-up/email', 'req/s', '', (r) => r.signUpRps, (r) => r.peerSignUpRps],
      ['Sign-in: POST /sign-up/email p99', 'ms', '', (r) => r.signUpP99, (r) => r.peerSignUpP99, false],
      ['Sign-in: JWT verifications/s, cached JWKS (jose)', '/s', '', (r) => r.jwtVerifyPerSecond],
      ['Scale: get-session, 1 tenant', 'req/s', '', (r) => r.getSession1Rps],
      [`Scale: get-session, ${QUICK ? 20 : 100} tenants`, 'req/s', '', (r) => r.getSessionManyRps],
    ],
    peerName: 'Better Auth + jwt()',
  },
  {
    // Whole-platform backup and restore, 50 applications with sign-in and end users (issue 31);
    // the peer, interleaved in the same run: tar | gzip -3 of the live data directory by hand.
    name: 'backups',
    script: 'bench/backups/run.mjs',
    env: QUICK ? { RUNS: '1', USERS: '5' } : { RUNS: '3', USERS: '20' },
    runs: 1,
    figures: [
      ['Backups: slipway admin backup, 50 apps (wall time)', 's', '', (r) => r.backupMs / 1000, (r) => r.peerBackupMs / 1000, false],
      ['Backups: backup file, 50 apps', 'MB', '', (r) => r.backupBytes / 1024 / 1024, (r) => r.peerBackupBytes / 1024 / 1024, false],
      ['Backups: slipway admin restore into a fresh home, 50 apps (wall time)', 's', '', (r) => r.restoreMs / 1000, (r) => r.peerRestoreMs / 1000, false],
      ["Backups: point-in-time restore of one app's database in place (slipway db restore, call → succeeded)", 's', '', (r) => r.pitrMs / 1000],
      ['Backups: base backup, 50 apps (the one inside admin backup)', 'MB', '', (r) => r.baseBytes / 1024 / 1024],
      ['Backups: scheduled base backup at start (no apps yet)', 'MB', '', (r) => r.scheduledBaseAtStartBytes / 1024 / 1024],
      ['Backups: machine load average (1 min) during the rounds, highest', '', '', (r) => r.loadMax],
    ],
    peerName: 'tar + gzip -3 of the live data directory by hand (tar -xzf to restore)',
  },
];

function runScript(bench, resultFile, log) {
  return new Promise((resolve) => {
    // BENCH_ONLY names benches here; bench/auth reads the same variable as its own row filter, so it is not passed on.
    const { BENCH_ONLY: _only, ...inherited } = process.env;
    const child = spawn(process.execPath, [join(ROOT, bench.script)], {
      cwd: ROOT,
      env: { ...inherited, ...bench.env, BENCH_RESULT_FILE: resultFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('exit', (code) => resolve(code));
  });
}

mkdirSync(LOGS, { recursive: true });
const started = Date.now();
const figures = [];
const failures = [];
for (const bench of BENCHES) {
  if (ONLY && !ONLY.includes(bench.name)) continue;
  const log = createWriteStream(join(LOGS, `${bench.name}.log`));
  const results = [];
  for (let run = 1; run <= bench.runs; run++) {
    const resultFile = join(tmpdir(), `slipway-bench-${bench.name}-${process.pid}-${run}.json`);
    process.stderr.write(`[bench] ${bench.name} run ${run}/${bench.runs}…\n`);
    const t = Date.now();
    const code = await runScript(bench, resultFile, log);
    try {
      if (code !== 0) throw new Error(`exit code ${code}`);
      results.push(bench.read ? bench.read() : JSON.parse(readFileSync(resultFile, 'utf8')));
    } catch (error) {
      failures.push(`${bench.name} run ${run}: ${error.message} (see bench/results/logs/${bench.name}.log)`);
    }
    rmSync(resultFile, { force: true });
    process.stderr.write(`[bench] ${bench.name} run ${run} done in ${((Date.now() - t) / 1000).toFixed(0)} s\n`);
  }
  log.end();
  if (!results.length) continue;
  for (const [figure, unit, target, value, peer, higherIsBetter = true] of bench.figures) {
    const v = median(results.map((r) => value(r)));
    const p = peer ? median(results.map((r) => peer(r))) : undefined;
    const ratio = v !== undefined && p ? (higherIsBetter ? v / p : p / v) : undefined;
    figures.push({
      bench: bench.name,
      figure,
      unit,
      value: v,
      target,
      peer: p,
      peerName: p !== undefined ? bench.peerName : undefined,
      ratio,
      runs: results.length,
    });
  }
}

const fmt = (n) => (n === undefined ? '' : Math.abs(n) >= 100 ? String(Math.round(n)) : n.toFixed(Math.abs(n) >= 10 ? 1 : 2));
const header = `pnpm bench — ${new Date().toISOString()}${QUICK ? ' (BENCH_QUICK)' : ''} — node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end, ${((Date.now() - started) / 1000).toFixed(0)} s`;
const lines = [
  header,
  'Medians over the runs shown. Ratio = slipway ÷ peer for throughput, peer ÷ slipway for latency (above 1 = slipway better).',
  '',
  '| figure | value | unit | target | peer | peer value | ratio | runs |',
  '|---|---:|---|---|---|---:|---:|---:|',
  ...figures.map(
    (f) =>
      `| ${f.figure} | ${fmt(f.value)} | ${f.unit} | ${f.target} | ${f.peerName ?? ''} | ${fmt(f.peer)} | ${f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}×`} | ${f.runs} |`,
  ),
  ...(failures.length ? ['', 'Failed runs:', ...failures.map((f) => `- ${f}`)] : []),
];
process.stdout.write(`\n${lines.join('\n')}\n`);
writeFileSync(
  join(RESULTS, 'latest.json'),
  `${JSON.stringify({ date: new Date().toISOString(), quick: QUICK, node: process.version, cores: cpus().length, seconds: (Date.now() - started) / 1000, figures, failures }, null, 2)}\n`,
);
writeFileSync(join(RESULTS, 'latest.md'), `${lines.join('\n')}\n`);
process.exit(failures.length ? 1 : 0);
