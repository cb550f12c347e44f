// What the edge benches that measure with wrk against nginx configured by hand share
// (bench/edge/planes.mjs, bench/edge/sandbox-network.mjs): the tools, one wrk run parsed, the
// hand-configured nginx peer, a raw request with a Host header, medians.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** wrk's `delay()` hook, holding each connection WRK_DELAY_MS between requests (`delayMs`). */
const DELAY_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'wrk-delay.lua');
const { waitFor } = await import(createRequire(join(ROOT, 'apps/edge/package.json')).resolve('@slipway/testing'));

/** The median of the finite values; NaN when there are none. */
export const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

/** A tool from Debian's packages when missing (as root), like `pnpm start` does for nginx. */
export function ensure(binary, packages) {
  if (spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`${binary} is needed: apt-get install -y ${packages.join(' ')}`);
  execFileSync('sh', ['-c', `apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${packages.join(' ')}`], { stdio: 'inherit' });
}

/** nginx (with the brotli module the edge's plane loads) and wrk. */
export function ensureNginxAndWrk() {
  ensure('nginx', ['nginx-light', 'libnginx-mod-http-brotli-static']);
  ensure('wrk', ['wrk']);
}

const toMs = (value, unit) => Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

/** CPU ticks (user + system, 1/100 s) of processes, by pid; a process that is gone counts 0. */
function ticks(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return total;
}

/** An nginx master's workers. */
export const workersOf = (master) =>
  spawnSync('pgrep', ['-P', String(master)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);

/** The machine's softirq time so far (all CPUs, 1/100 s): the kernel's packet processing. */
function softirqTicks() {
  return Number(readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)[7]);
}

/** A process and its descendants, by pid (read from /proc). */
export function processTree(root) {
  const children = new Map();
  for (const line of spawnSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' }).stdout.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree = [];
  for (const queue = [root]; queue.length;) {
    const pid = queue.shift();
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * One wrk run (-t1, keep-alive): requests/s, p50/p99 in ms, non-2xx and socket errors, and — when
 * the proxy's pids are given — the proxy's CPU per request in µs (less sensitive to a loaded
 * machine than req/s). `cpu`: more processes to account per request, by name (their µs per
 * request in `cpu[name]`, plus `cpu.softirq`: the machine's packet processing, whoever caused it).
 * `delayMs`: each connection waits that long after every answer before its next request (wrk's
 * `delay()` hook), so the load offered is about connections × 1000 / delayMs req/s whatever the
 * target: latency at a rate below saturation instead of as fast as it goes.
 */
export function wrk(port, host, path, { connections, duration, proxyPids = () => [], cpu = {}, delayMs }) {
  const pids = proxyPids();
  const before = ticks(pids);
  const groups = Object.entries(cpu).map(([name, pidsOf]) => {
    const of = pidsOf();
    return { name, of, before: ticks(of) };
  });
  const softirq = softirqTicks();
  if (delayMs !== undefined && !(Number.isInteger(delayMs) && delayMs >= 1)) throw new Error(`delayMs must be a whole number of ms ≥ 1, not ${delayMs}`);
  const script = delayMs ? ['-s', DELAY_SCRIPT] : [];
  const out = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', ...script, '-H', `Host: ${host}`, `http://127.0.0.1:${port}${path}`],
    { encoding: 'utf8', env: delayMs ? { ...process.env, WRK_DELAY_MS: String(delayMs) } : process.env },
  );
  const pct = (p) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1] ?? '';
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const perRequest = (t) => (requests ? (t * 10_000) / requests : NaN);
  const cpuUs = pids.length ? perRequest(ticks(pids) - before) : NaN;
  const perGroup = Object.fromEntries(groups.map((g) => [g.name, g.of.length ? perRequest(ticks(g.of) - g.before) : NaN]));
  if (groups.length) perGroup.softirq = perRequest(softirqTicks() - softirq);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]), p50: pct(50), p99: pct(99), non2xx, errors, cpuUs, cpu: perGroup };
}

/**
 * The peer's nginx.conf (startPeer's; nginx-instructions.mjs counts the same text): state files
 * under `dir`, listening on `port`, Host `serverName` proxied to `127.0.0.1:appPort` (or to
 * `upstream`, host:port); `user`: the user its workers run as (nginx's default when not given).
 */
export function peerConfig(dir, port, { appPort, staticRoot, serverName = 'app.peer', upstream = `127.0.0.1:${appPort}`, user }) {
  const staticServer = staticRoot
    ? `
  server {
    listen 127.0.0.1:${port};
    server_name static.peer;
    root ${staticRoot};
    gzip_static on;
    location / { try_files $uri $uri/ =404; }
  }`
    : '';
  return `${user ? `user ${user};\n` : ''}worker_processes 1;
pid ${dir}/peer.pid;
error_log stderr warn;
events { worker_connections 8192; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  upstream app { server ${upstream}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    server_name ${serverName};
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }${staticServer}
}
`;
}

/**
 * The peer: nginx configured by hand as Dokku/Kamal-style proxies do — one worker, HTTP/1.1
 * keep-alive upstream (64) to `127.0.0.1:appPort` for Host `app.peer`; with `staticRoot`, also a
 * static server for Host `static.peer`. `upstream`/`user`: as peerConfig's (the sandbox-network
 * bench points the same config at a sandboxed app). Resolves once it answers.
 */
export async function startPeer(dir, port, { appPort, staticRoot, upstream, user }) {
  const conf = join(dir, 'peer.conf');
  await writeFile(conf, peerConfig(dir, port, { appPort, staticRoot, upstream, user }));
  const child = spawn('nginx', ['-c', conf, '-g', 'daemon off;'], { stdio: 'inherit' });
  await waitFor(() => head(port, 'app.peer', '/').startsWith('HTTP/1.1 '), { timeoutMs: 10_000, what: 'the peer nginx' });
  return child;
}

/**
 * Stops a child and resolves once it is gone: `signal` first (nginx: SIGQUIT, a graceful stop
 * that waits for its workers), SIGKILL after `graceMs`. `group`: the child's whole process group
 * (a child spawned `detached`, e.g. `sh -c 'npm start'` and the node under it).
 */
export async function stopChild(child, { signal = 'SIGTERM', graceMs = 10_000, group = false } = {}) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const send = (s) => {
    try {
      process.kill(group ? -child.pid : child.pid, s);
    } catch {
      // already gone
    }
  };
  send(signal);
  const timer = setTimeout(() => send('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  // The group's other members (the app under `sh`) may outlive its leader by a moment.
  if (group) send('SIGKILL');
}

/** The response head of one request with a Host header (fetch cannot set Host). */
export function head(port, host, path) {
  const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET ${path} HTTP/1.1\\r\\nHost: ${host}\\r\\nConnection: close\\r\\n\\r\\n' >&3 && timeout 5 cat <&3 | sed '/^\\r$/q'`;
  return spawnSync('bash', ['-c', script], { encoding: 'utf8' }).stdout ?? '';
}
