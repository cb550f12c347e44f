// bench/deploy-accept: latency of POST /api/v1/deploy (1 MB archive, 20 concurrent clients), the
// gateway's memory while it accepts a 200 MB archive, and its RSS growth across 20 hostile
// uploads (archives that lie about their headers, bombs, clients that stop sending). Starts its own gateway process over a
// fresh database on the local Postgres (TEST_DATABASE_URL) and a Redis key prefix of its own;
// removes everything afterwards. Run: `pnpm bench:deploy-accept` (builds the gateway first).
//
// One active deploy per application and 20 deploys per hour per application are real rules, so
// every request deploys a different application (created in SQL up front); no limit is relaxed.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostileUploads, sendHostile } from './hostile.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const requireFromSchema = createRequire(join(root, 'libs/platform-schema/package.json'));
const requireFromGateway = createRequire(join(root, 'apps/gateway/package.json'));
const pg = requireFromSchema('pg');
const tar = requireFromGateway('tar-stream');
const { Redis } = requireFromGateway('ioredis');
const { applyMigrations } = await import(join(root, 'libs/platform-schema/dist/index.js'));

const SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const WARMUP = 40;
const SINGLE = Number(process.env.BENCH_SINGLE_REQUESTS ?? 40);
const SMALL_BYTES = Number(process.env.BENCH_ARCHIVE_BYTES ?? 1_000_000);
const BIG_BYTES = Number(process.env.BENCH_BIG_BYTES ?? 200_000_000);
/** GATEWAY_WORKERS of the gateway under test (node:cluster processes; a build without it ignores it). */
const WORKERS = process.env.BENCH_GATEWAY_WORKERS ?? '1';
/** The gateway's UPLOAD_IDLE_TIMEOUT_SECONDS here, so the hostile row's stalled uploads end in seconds. */
const IDLE_SECONDS = 5;
const HOSTILE = 20;

const suffix = randomBytes(4).toString('hex');
const dbName = `slipway_bench_${suffix}`;
const prefix = `slipway-bench-${suffix}`;
const work = await mkdtemp(join(tmpdir(), 'slipway-bench-'));
const withDb = (name) => {
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
};

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A tar of `bytes` random (incompressible) bytes in 1 MB files, written to disk, never held whole. */
async function makeArchive(path, bytes) {
  const pack = tar.pack();
  const out = createWriteStream(path);
  pack.pipe(out);
  const fileSize = Math.min(1_000_000, bytes);
  for (let i = 0, left = bytes; left > 0; i++) {
    const size = Math.min(fileSize, left);
    await new Promise((resolve, reject) => pack.entry({ name: `public/asset-${i}.bin`, size }, randomBytes(size), (e) => (e ? reject(e) : resolve())));
    left -= size;
  }
  pack.finalize();
  await new Promise((resolve) => out.on('close', resolve));
  return (await stat(path)).size;
}

function multipartHead(boundary) {
  return Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="site.tar"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

/**
 * POSTs an archive: a Buffer (sent in one write) or a file path (streamed from disk); resolves
 * with the total latency, the latency after the last byte was handed to the kernel, and the
 * gateway's Server-Timing.
 */
function deploy(agent, port, key, archive, archiveSize) {
  const boundary = `bench${randomBytes(6).toString('hex')}`;
  const head = multipartHead(boundary);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let sentAt = 0;
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/deploy',
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + archiveSize + tail.length,
      },
    });
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const done = performance.now();
        // The gateway's own account (Server-Timing): from the body's last byte read to the answer.
        const timing = Object.fromEntries([...(res.headers['server-timing'] ?? '').matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
        resolve({
          status: res.statusCode,
          body: Buffer.concat(chunks).toString(),
          totalMs: done - started,
          afterUploadMs: done - (sentAt || done),
          gatewayAcceptMs: timing.accept ?? NaN,
          timing,
        });
      });
    });
    req.on('error', reject);
    req.write(head);
    if (Buffer.isBuffer(archive)) {
      req.write(archive);
      req.end(tail, () => {
        sentAt = performance.now();
      });
      return;
    }
    const file = createReadStream(archive);
    file.pipe(req, { end: false });
    file.on('end', () =>
      req.end(tail, () => {
        sentAt = performance.now();
      }),
    );
  });
}

/** The process and its children (the gateway's node:cluster workers, BENCH_GATEWAY_WORKERS > 1). */
const processTree = async (pid) => {
  const pids = [pid];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(entry));
  }
  return pids;
};
/** CPU time (user + system) the gateway's processes have used, in ms. */
const cpuMs = async (pid) => {
  let total = 0;
  for (const p of await processTree(pid)) {
    const stat = await readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  }
  return total;
};
/** The whole machine's CPU time (all cores) since boot, busy and idle (iowait counts as idle), in ms. */
const machineCpuMs = async () => {
  const f = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0) * 10;
  return { total, idle: (f[3] + f[4]) * 10 };
};
const percentile = (values, p) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const procStatus1 = async (pid, field) =>
  Number(/(\d+) kB/.exec((await readFile(`/proc/${pid}/status`, 'utf8')).split('\n').find((l) => l.startsWith(field)))[1]) / 1024;
/** A /proc status field (VmRSS, VmHWM) summed over the gateway's processes, in MB. */
const procStatus = async (pid, field) => {
  let total = 0;
  for (const p of await processTree(pid)) total += await procStatus1(p, field).catch(() => 0);
  return total;
};

let gateway;
const admin = new pg.Client({ connectionString: SERVER_URL });
await admin.connect();
try {
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const databaseUrl = withDb(dbName);
  await applyMigrations(databaseUrl);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const owner = (await db.query(`INSERT INTO owners (email) VALUES ('bench@example.com') RETURNING id`)).rows[0].id;
  const keys = [];
  const total = WARMUP + REQUESTS + SINGLE + 10 + HOSTILE;
  for (let i = 0; i < total; i++) {
    const token = `slw_key_${randomBytes(16).toString('hex').slice(0, 10)}_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`;
    keys.push({ token, prefix: token.slice(0, 18), hash: createHash('sha256').update(token).digest('hex') });
  }
  await db.query(
    `WITH apps AS (
      INSERT INTO applications (owner_id, name, slug) SELECT $1, 'bench-' || i, 'bench-' || i FROM generate_series(1, $2) AS i RETURNING id, slug)
    INSERT INTO api_keys (application_id, name, prefix, key_hash)
      SELECT apps.id, 'bench', k.prefix, k.hash FROM apps JOIN unnest($3::text[], $4::text[]) WITH ORDINALITY AS k(prefix, hash, n) ON apps.slug = 'bench-' || k.n`,
    [owner, total, keys.map((k) => k.prefix), keys.map((k) => k.hash)],
  );

  const small = join(work, 'small.tar');
  const smallSize = await makeArchive(small, SMALL_BYTES);
  // The 1 MB archive is sent from memory: the load generator shares the machine's 2 cores with
  // the gateway, and re-reading the file per request cost it ~1 ms of CPU.
  const smallBody = await readFile(small);
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    GATEWAY_WORKERS: WORKERS,
    QUEUE_PREFIX: prefix,
    BLOB_DIR: join(work, 'blobs'),
    UPLOAD_TMP_DIR: join(work, 'uploads'),
    UPLOAD_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS),
  };
  // BENCH_GATEWAY_NODE_ARGS="--prof" profiles the gateway (V8 tick log in the working directory).
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // BENCH_GATEWAY_MAIN runs another build of the gateway (e.g. an older commit's, for an A/B run).
  gateway = spawn(process.execPath, [...nodeArgs, process.env.BENCH_GATEWAY_MAIN ?? join(root, 'apps/gateway/dist/main.js')], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 200) throw new Error('gateway did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Several workers: /health/ready answers once the first listens. Wait until every worker
  // exists and has gone quiet (started), so that the measured connections are spread over all.
  const expectedWorkers = WORKERS === 'auto' ? (await import('node:os')).availableParallelism() : Number(WORKERS);
  if (expectedWorkers > 1) {
    for (let i = 0; (await processTree(gateway.pid)).length < expectedWorkers + 1; i++) {
      if (i > 300) throw new Error('gateway workers did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (let quiet = 0; quiet < 2;) {
      const before = await cpuMs(gateway.pid);
      await new Promise((r) => setTimeout(r, 500));
      quiet = (await cpuMs(gateway.pid)) - before < 50 ? quiet + 1 : 0;
    }
  }
  const rssIdle = await procStatus(gateway.pid, 'VmRSS');

  // Phase 1: 1 MB archive, CONCURRENCY clients, each request a different application.
  let agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  const run = async (count, results) => {
    const worker = async () => {
      while (next < count) {
        const key = keys[next++].token;
        results.push(await deploy(agent, port, key, smallBody, smallSize));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  await run(WARMUP, []);
  // Fresh connections for the measurement (node:cluster hands each new connection to the next worker).
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const results = [];
  const cpuBefore = await cpuMs(gateway.pid);
  const clientCpuBefore = process.cpuUsage();
  const machineBefore = await machineCpuMs();
  const startedAt = performance.now();
  await run(WARMUP + REQUESTS, results);
  const elapsed = (performance.now() - startedAt) / 1000;
  const gatewayCpuPerRequestMs = ((await cpuMs(gateway.pid)) - cpuBefore) / results.length;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const clientCpuPerRequestMs = (clientCpu.user + clientCpu.system) / 1000 / results.length;
  const machine = await machineCpuMs();
  const machineBusy = 1 - (machine.idle - machineBefore.idle) / (machine.total - machineBefore.total);
  const machineCpuPerRequestMs = (machine.total - machine.idle - (machineBefore.total - machineBefore.idle)) / results.length;
  const accepted = results.filter((r) => r.status === 202).length;
  if (accepted !== results.length) console.error('unexpected answers:', results.filter((r) => r.status !== 202).slice(0, 3));
  const rssAfterLoad = await procStatus(gateway.pid, 'VmRSS');

  // Phase 1b: the same archive from one client at a time (no queueing: the gateway's own cost).
  const single = [];
  const singleCpuBefore = await cpuMs(gateway.pid);
  for (let i = 0; i < SINGLE; i++) single.push(await deploy(agent, port, keys[next++].token, smallBody, smallSize));
  const singleCpuPerRequestMs = SINGLE ? ((await cpuMs(gateway.pid)) - singleCpuBefore) / SINGLE : 0;

  // Phase 2: peak RSS while accepting a 20 MB and a 200 MB archive (sampled every 10 ms).
  const memory = [];
  for (const bytes of [BIG_BYTES / 10, BIG_BYTES]) {
    const path = join(work, `big-${bytes}.tar`);
    const size = await makeArchive(path, bytes);
    const before = await procStatus(gateway.pid, 'VmRSS');
    let peak = before;
    const sampler = setInterval(() => {
      procStatus(gateway.pid, 'VmRSS').then(
        (v) => {
          peak = Math.max(peak, v);
        },
        () => undefined,
      );
    }, 10);
    const result = await deploy(new Agent(), port, keys[next++].token, path, size);
    clearInterval(sampler);
    memory.push({
      archiveMB: size / 1e6,
      status: result.status,
      seconds: result.totalMs / 1000,
      rssBeforeMB: before,
      peakRssMB: peak,
      growthMB: peak - before,
    });
    await rm(path);
  }

  // Phase 3: RSS across 20 hostile uploads, four at a time, each from an application of its own
  // (hostile.mjs; the gateway must refuse them all without holding what they claim).
  const hostile = hostileUploads(IDLE_SECONDS);
  const hostileBefore = await procStatus(gateway.pid, 'VmRSS');
  let hostilePeak = hostileBefore;
  const hostileSampler = setInterval(() => {
    procStatus(gateway.pid, 'VmRSS').then(
      (v) => {
        hostilePeak = Math.max(hostilePeak, v);
      },
      () => undefined,
    );
  }, 10);
  const hostileAnswers = [];
  const hostileStarted = performance.now();
  for (let i = 0; i < hostile.length; i += 4) {
    const batch = hostile.slice(i, i + 4);
    const answers = await Promise.all(batch.map(([, make]) => sendHostile(port, keys[next++].token, make())));
    answers.forEach((answer, j) => hostileAnswers.push({ upload: batch[j][0], answer }));
  }
  clearInterval(hostileSampler);
  const hostileSeconds = (performance.now() - hostileStarted) / 1000;
  const hwm = await procStatus(gateway.pid, 'VmHWM');

  const pct = (values) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
  const phases = (list) => Object.fromEntries(['store', 'row', 'queue'].map((phase) => [phase, pct(list.map((r) => r.timing[phase] ?? NaN))]));
  const summary = {
    date: new Date().toISOString(),
    gatewayWorkers: WORKERS,
    gatewayMain: process.env.BENCH_GATEWAY_MAIN ?? null,
    latency: {
      archiveBytes: smallSize,
      concurrency: CONCURRENCY,
      requests: results.length,
      accepted,
      throughputPerSecond: results.length / elapsed,
      gatewayCpuPerRequestMs,
      clientCpuPerRequestMs,
      machineCpuPerRequestMs,
      machineBusy,
      totalMs: pct(results.map((r) => r.totalMs)),
      // The target figure ("upload excluded"): the gateway's Server-Timing `accept`, from the body's last byte read to the answer.
      gatewayAcceptMs: pct(results.map((r) => r.gatewayAcceptMs)),
      gatewayAcceptPhasesMs: phases(results),
      afterUploadMs: pct(results.map((r) => r.afterUploadMs)),
    },
    singleClient: SINGLE
      ? {
          requests: single.length,
          accepted: single.filter((r) => r.status === 202).length,
          gatewayCpuPerRequestMs: singleCpuPerRequestMs,
          totalMs: pct(single.map((r) => r.totalMs)),
          gatewayAcceptMs: pct(single.map((r) => r.gatewayAcceptMs)),
          afterUploadMs: pct(single.map((r) => r.afterUploadMs)),
        }
      : null,
    memory: {
      rssIdleMB: rssIdle,
      rssAfterLatencyPhaseMB: rssAfterLoad,
      uploads: memory,
      processPeakRssMB: hwm,
      hostile: { uploads: hostileAnswers, seconds: hostileSeconds, rssBeforeMB: hostileBefore, peakRssMB: hostilePeak, growthMB: hostilePeak - hostileBefore },
    },
  };
  const f = (n) => n.toFixed(1);
  const row = (label, { p50, p99 }) => console.log(`| ${label.padEnd(60)} | ${f(p50).padStart(5)} | ${f(p99).padStart(5)} |`);
  const l = summary.latency;
  console.log(
    `\nPOST /api/v1/deploy, GATEWAY_WORKERS=${WORKERS}${process.env.BENCH_GATEWAY_MAIN ? ` (${process.env.BENCH_GATEWAY_MAIN})` : ''}, ${f(smallSize / 1e6)} MB tar, ${CONCURRENCY} concurrent clients, ${results.length} requests (${accepted} × 202), ${f(l.throughputPerSecond)} req/s`,
  );
  console.log(`| ${'latency (ms)'.padEnd(60)} |   p50 |   p99 |`);
  console.log(`|${'-'.repeat(62)}|-------|-------|`);
  row('whole request (upload included)', l.totalMs);
  row('upload excluded: gateway read the last byte → 202 (target)', l.gatewayAcceptMs);
  for (const [phase, label] of [
    ['store', 'end of the source tar, fdatasync, rename, dir fsync'],
    ['row', 'deployment row committed'],
    ['queue', 'BullMQ job added'],
  ])
    row(`  ${phase}: ${label}`, l.gatewayAcceptPhasesMs[phase]);
  row("client's last write returned → 202 (see bench/README.md)", l.afterUploadMs);
  console.log(
    `CPU per accepted deploy (user + system): gateway ${f(gatewayCpuPerRequestMs)} ms, this load generator ${f(clientCpuPerRequestMs)} ms, whole machine ${f(machineCpuPerRequestMs)} ms (busy ${(100 * machineBusy).toFixed(0)}%); machine: ${(await import('node:os')).cpus().length} cores, load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`,
  );
  if (summary.singleClient) {
    const s1 = summary.singleClient;
    console.log(
      `one client, ${s1.requests} sequential requests (${s1.accepted} × 202): upload excluded p50/p99 ${f(s1.gatewayAcceptMs.p50)}/${f(s1.gatewayAcceptMs.p99)} ms, whole request ${f(s1.totalMs.p50)}/${f(s1.totalMs.p99)} ms, gateway CPU ${f(s1.gatewayCpuPerRequestMs)} ms per deploy`,
    );
  }
  console.log(`\nGateway memory (RSS, MB): idle ${f(rssIdle)}, after the latency phase ${f(rssAfterLoad)}`);
  console.log('| archive (MB) | status | seconds | RSS before | peak RSS | growth |');
  console.log('|--------------|--------|---------|------------|----------|--------|');
  for (const m of memory)
    console.log(
      `| ${f(m.archiveMB).padStart(12)} | ${String(m.status).padStart(6)} | ${f(m.seconds).padStart(7)} | ${f(m.rssBeforeMB).padStart(10)} | ${f(m.peakRssMB).padStart(8)} | ${f(m.growthMB).padStart(6)} |`,
    );
  const counts = new Map();
  for (const { answer } of hostileAnswers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  const tally = [...counts].map(([answer, n]) => `${n} × ${answer}`).join(', ');
  console.log(
    `| gateway RSS growth across ${hostileAnswers.length} hostile uploads (4 at a time, ${f(hostileSeconds)} s) | ${f(hostileBefore)} → peak ${f(hostilePeak)} | +${f(hostilePeak - hostileBefore)} MB |`,
  );
  console.log(`  answers: ${tally}`);
  console.log(`process peak RSS (VmHWM) over the whole run: ${f(hwm)} MB`);
  await mkdir(join(root, 'bench/results'), { recursive: true });
  await writeFile(join(root, 'bench/results/deploy-accept.json'), `${JSON.stringify(summary, null, 2)}\n`);
  await db.end();
} finally {
  if (gateway && gateway.exitCode === null) {
    gateway.kill('SIGTERM');
    await new Promise((r) => gateway.once('exit', r));
  }
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (found.length) await redis.del(...found);
    cursor = nextCursor;
  } while (cursor !== '0');
  redis.disconnect();
  await rm(work, { recursive: true, force: true });
}
