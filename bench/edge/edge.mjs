// Requests/s and latency through the edge at 50 connections: a static file, a proxied Node app,
// and the same Node app hit directly (the proxy's overhead is the difference).
// Run: pnpm nx run-many -t build && node bench/edge/edge.mjs   (DURATION=8 seconds per case)
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fromEdge = createRequire(join(ROOT, 'apps/edge/package.json'));
const load = (name) => import(fromEdge.resolve(name));
const [{ default: autocannon }, { default: pg }, { Redis }, blob, contract, testing] = await Promise.all(['autocannon', 'pg', 'ioredis', '@slipway/blob', '@slipway/contract', '@slipway/testing'].map(load));
const { Queue } = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('bullmq'));
const { default: tarStream } = await import(createRequire(join(ROOT, 'apps/build-worker/package.json')).resolve('tar-stream'));
const DURATION = Number(process.env.DURATION ?? 8);
const FIXTURES = join(ROOT, 'libs/analyzer/fixtures');

async function sourceTar(dir, extra = {}) {
  const pack = tarStream.pack();
  const chunks = [];
  pack.on('data', (c) => chunks.push(c));
  const done = new Promise((r) => pack.on('end', r));
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const rel = join(e.parentPath ?? e.path, e.name).slice(dir.length + 1);
    if (!(rel in extra)) pack.entry({ name: rel, mode: 0o644 }, await readFile(join(dir, rel)));
  }
  for (const [name, content] of Object.entries(extra)) pack.entry({ name, mode: 0o644 }, content);
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

const db = await testing.createTestDatabase('bench-edge');
const { prefix: p, cleanup } = testing.testRedisPrefix('bench-edge');
const prefix = p.replace(/:$/, '');
const home = await mkdtemp(join(tmpdir(), 'slipway-bench-edge-'));
await chmod(home, 0o755);
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const redis = new Redis(testing.TEST_REDIS_URL, { maxRetriesPerRequest: null });
const queue = new Queue('deploy', { connection: redis, prefix });
const blobs = blob.createBlobStore({ BLOB_DIR: join(home, 'blobs') });
const port = await testing.freePort();
const env = {
  PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL: testing.TEST_REDIS_URL, SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'), SLIPWAY_HOME: home,
  QUEUE_PREFIX: prefix, HOST: '127.0.0.1', LOG_LEVEL: 'warn', EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}`,
};
const edge = testing.startProcess(process.execPath, [join(ROOT, 'apps/edge/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: String(port) } });
const worker = testing.startProcess(process.execPath, [join(ROOT, 'apps/build-worker/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: '0', LOG_LEVEL: 'log' } });
let direct;
const rows = [];
try {
  await worker.waitForOutput(/consuming queue/, 30_000);
  await testing.waitFor(() => fetch(`http://127.0.0.1:${port}/health/live`).then((r) => r.ok), { timeoutMs: 30_000 });

  async function deploy(slug, source) {
    const owner = await client.query('INSERT INTO owners (email) VALUES ($1) RETURNING id', [`${slug}@example.com`]);
    const applicationId = (await client.query('INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id', [owner.rows[0].id, slug])).rows[0].id;
    const id = randomUUID();
    const stored = await blobs.put(blob.sourceKey(id), Readable.from([source]));
    await client.query(`INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at) VALUES ($1, $2, 'queued', $3, $4, $5, now() + interval '15 minutes')`, [id, applicationId, JSON.stringify(contract.pendingSteps()), blob.sourceKey(id), stored.bytes]);
    await queue.add('deploy', { deploymentId: id, applicationId }, { jobId: id });
    const row = await testing.waitFor(async () => {
      const { rows: r } = await client.query('SELECT status, error FROM deployments WHERE id = $1', [id]);
      return r[0].status === 'succeeded' || r[0].status === 'failed' ? r[0] : undefined;
    }, { timeoutMs: 120_000 });
    if (row.status !== 'succeeded') throw new Error(JSON.stringify(row.error));
  }

  const page = `<!doctype html><title>bench</title>${'<p>slipway edge benchmark</p>'.repeat(60)}`;
  await deploy('bench-static', await sourceTar(join(FIXTURES, 'static-site'), { 'bench.html': page }));
  await deploy('bench-node', await sourceTar(join(FIXTURES, 'node-echo')));
  const directPort = await testing.freePort();
  direct = testing.startProcess(process.execPath, [join(FIXTURES, 'node-echo/server.js')], { env: { PATH: process.env.PATH, PORT: String(directPort) } });
  await testing.waitFor(() => fetch(`http://127.0.0.1:${directPort}/x`).then((r) => r.ok), { timeoutMs: 10_000 });

  const cases = [
    ['static file via edge', `http://127.0.0.1:${port}/bench.html`, `bench-static.localhost:${port}`],
    ['Node app via edge', `http://127.0.0.1:${port}/x`, `bench-node.localhost:${port}`],
    ['Node app direct', `http://127.0.0.1:${directPort}/x`, `127.0.0.1:${directPort}`],
  ];
  for (const connections of [50, 1]) {
    for (const [name, url, host] of connections === 50 ? cases : cases.slice(1)) {
      await autocannon({ url, connections, duration: 2, headers: { host } }); // warm-up
      const r = await autocannon({ url, connections, duration: DURATION, headers: { host } });
      rows.push({ name, connections, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts });
    }
  }
} finally {
  await direct?.stop();
  await worker.stop();
  await edge.stop();
  await queue.close();
  redis.disconnect();
  await client.end();
  await cleanup();
  await db.drop();
  await rm(home, { recursive: true, force: true });
}

console.log(`\nedge: 50 connections, ${DURATION} s per case, ${process.version}, ${cpus().length} cores (autocannon on the same machine)\n`);
console.log('| case | connections | requests/s | p50 ms | p99 ms | non-2xx | errors |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.name} | ${r.connections} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`);
for (const c of [50, 1]) {
  const via = rows.find((r) => r.name === 'Node app via edge' && r.connections === c);
  const dir = rows.find((r) => r.name === 'Node app direct' && r.connections === c);
  if (via && dir) console.log(`proxy overhead at ${c} connection(s): p50 ${(via.p50 - dir.p50).toFixed(2)} ms, p99 ${(via.p99 - dir.p99).toFixed(2)} ms (target: p50 under 1 ms)`);
}
// `pnpm bench` (bench/run.mjs) reads the figures from here.
if (process.env.BENCH_RESULT_FILE) {
  const at = (name, c) => rows.find((r) => r.name === name && r.connections === c);
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify({
    staticRps: at('static file via edge', 50).rps, staticP99: at('static file via edge', 50).p99,
    proxiedRps: at('Node app via edge', 50).rps, proxiedP99: at('Node app via edge', 50).p99,
    directRps: at('Node app direct', 50).rps,
    overheadP50At1: at('Node app via edge', 1).p50 - at('Node app direct', 1).p50,
    overheadP99At1: at('Node app via edge', 1).p99 - at('Node app direct', 1).p99,
  }));
}
