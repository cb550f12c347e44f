// nginx's instructions per proxied request, counted by valgrind's callgrind: Slipway's rendered
// config (libs/data-plane nginx-config.ts, one proxied application with everything `pnpm start`
// gives it: the metrics log, the 5xx feed, the usage log, the second slot's marker) against the
// hand-written peer of sandbox-network.mjs, both in front of the same plain hello app on loopback,
// and Slipway's config with each of those parts left out in turn. Instructions do not depend on
// what else the machine is doing (this 2-core VM swings ±20 % in req/s from run to run, which
// hides a 1–2 µs difference), so this says what each part of the plane costs per request, in
// nginx's own code and libc; it does not count the kernel (system calls are the same on both:
// `strace -c` counts 2 writev, 2 recvfrom, 1 getsockopt per request on each).
// Run: pnpm nx run data-plane:build && node bench/edge/nginx-instructions.mjs
// Env: DURATION (s of load per config under callgrind, 6), CONNECTIONS (10).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ensure, head, peerConfig } from './wrk.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { freePort, waitFor } = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));
const { renderNginxConfig } = await import(join(ROOT, 'libs/data-plane/dist/nginx/nginx-config.js'));
const DURATION = Number(process.env.DURATION ?? 6);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const HOST = 'hello.localhost';
ensure('nginx', ['nginx-light']);
ensure('wrk', ['wrk']);
ensure('valgrind', ['valgrind']);

const dir = mkdtempSync(join(tmpdir(), 'slipway-nginx-instr-'));
const [appPort, port] = [await freePort(), await freePort()];
// The hello app in a process of its own: wrk and the probes below block this one.
const app = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end('Hello from Slipway\\n')).listen(${appPort}, '127.0.0.1')`,
  ],
  { stdio: 'inherit' },
);
await waitFor(() => head(appPort, HOST, '/').startsWith('HTTP/1.1 200'), { timeoutMs: 10_000, what: 'the hello app' });

const peerConf = (state) => peerConfig(state, port, { appPort, serverName: HOST });

/** Slipway's config for one proxied application; `without` leaves parts out. */
const slipwayConfig = (state, without = new Set()) =>
  renderNginxConfig({
    listen: { host: '127.0.0.1', port },
    fallback: { host: '127.0.0.1', port: 9 },
    stateDir: state,
    scheme: 'http',
    workers: 1,
    brotliModule: null,
    user: null,
    statusFeed: without.has('5xx feed') ? undefined : { port: 9, token: '0123456789abcdef0123456789abcdef' },
    metricsLog: without.has('metrics log') ? undefined : join(state, 'metrics.log'),
    sites: [
      {
        kind: 'proxy',
        id: 'hello',
        hosts: [HOST],
        upstream: { host: '127.0.0.1', port: appPort },
        ...(without.has('slot marker') ? {} : { alternate: { upstream: { host: '127.0.0.1', port: appPort }, whenFileExists: join(state, 'slot-b') } }),
        ...(without.has('usage log') ? {} : { usageLog: join(state, 'usage.log') }),
      },
    ],
  });

/** Instructions per request of one config: nginx (one process, no master) under callgrind, counting only while wrk runs. */
async function count(name, render) {
  const state = mkdtempSync(join(dir, 'n-'));
  const conf = join(state, 'nginx.conf');
  writeFileSync(conf, render(state).replace(/^worker_processes .*$/m, 'worker_processes 1;\nmaster_process off;\ndaemon off;'));
  const out = join(state, 'callgrind.out');
  const nginx = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, 'nginx', '-c', conf], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  nginx.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((ok) => nginx.once('exit', ok));
  try {
    for (let i = 0; !head(port, HOST, '/').startsWith('HTTP/1.1 200'); i++) {
      if (i > 100 || nginx.exitCode !== null) throw new Error(`${name}: nginx under valgrind did not answer: ${stderr.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const load = (seconds) =>
      execFileSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-H', `Host: ${HOST}`, `http://127.0.0.1:${port}/`], { encoding: 'utf8' });
    load(2); // connections, caches and the upstream pool warm before anything counts
    spawnSync('callgrind_control', ['-i', 'on', String(nginx.pid)], { stdio: 'ignore' });
    const text = load(DURATION);
    spawnSync('callgrind_control', ['-i', 'off', String(nginx.pid)], { stdio: 'ignore' });
    const requests = Number(/(\d+) requests in/.exec(text)?.[1]);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
    nginx.kill('SIGQUIT');
    await exited;
    // `totals:` (the run's count; `summary:` stays 0 when counting starts switched off).
    const totals = Number(/^totals:\s+(\d+)/m.exec(readFileSync(out, 'utf8'))?.[1]);
    if (!(totals > 0) || !(requests > 0)) throw new Error(`${name}: nothing counted (${requests} requests, ${totals} instructions)`);
    return { name, requests, non2xx, perRequest: totals / requests };
  } finally {
    if (nginx.exitCode === null) nginx.kill('SIGKILL');
    await exited;
  }
}

const rows = [];
try {
  rows.push(await count('peer: nginx by hand (sandbox-network.mjs)', peerConf));
  rows.push(await count("Slipway's plane, all of it", (s) => slipwayConfig(s)));
  for (const part of ['metrics log', '5xx feed', 'slot marker', 'usage log'])
    rows.push(await count(`Slipway's plane without the ${part}`, (s) => slipwayConfig(s, new Set([part]))));
  rows.push(await count("Slipway's plane without all four", (s) => slipwayConfig(s, new Set(['metrics log', '5xx feed', 'slot marker', 'usage log']))));
} finally {
  app.kill();
  rmSync(dir, { recursive: true, force: true });
}

const peer = rows[0].perRequest;
const full = rows[1].perRequest;
console.log(
  `\nnginx instructions per proxied request (callgrind, user space: nginx and libc), wrk -t1 -c${CONNECTIONS} ${DURATION} s per config, the hello app on loopback; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (instructions do not depend on it)`,
);
console.log('| config | requests counted | non-2xx | instructions / request | ÷ peer | what the part costs (all of it − without it) |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const part = r.name.startsWith("Slipway's plane without") ? Math.round(full - r.perRequest).toLocaleString('en') : '—';
  console.log(`| ${r.name} | ${r.requests} | ${r.non2xx} | ${Math.round(r.perRequest).toLocaleString('en')} | ${(r.perRequest / peer).toFixed(3)} | ${part} |`);
}
if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify({ rows }));
