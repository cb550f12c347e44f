// Time from an accepted deploy (source stored, row committed, job enqueued — what the gateway
// does) to `succeeded`, for the static site and the Node server fixtures, cold (new application:
// empty dependency cache) and warm (same application, unchanged lockfile).
// Run: pnpm nx run-many -t build && node bench/time-to-live/time-to-live.mjs
// Real Postgres, Redis, build-worker process and edge process (Node releases are started and
// health-checked by the edge before they count as succeeded).
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fromWorker = createRequire(join(ROOT, 'apps/build-worker/package.json'));
const load = (name) => import(fromWorker.resolve(name));
const [{ default: pg }, { Redis }, { Queue }, { default: tarStream }, blob, contract, testing] = await Promise.all(
  ['pg', 'ioredis', 'bullmq', 'tar-stream', '@slipway/blob', '@slipway/contract', '@slipway/testing'].map(load),
);

const FIXTURES = join(ROOT, 'libs/analyzer/fixtures');
const RUNS = Number(process.env.RUNS ?? 3);

async function files(dir, prefix = '') {
  const out = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    if (e.isDirectory()) out.push(...(await files(dir, rel)));
    else out.push(rel);
  }
  return out;
}

async function sourceTar(dir) {
  const pack = tarStream.pack();
  const chunks = [];
  pack.on('data', (c) => chunks.push(c));
  const done = new Promise((r) => pack.on('end', r));
  for (const f of await files(dir)) pack.entry({ name: f, mode: 0o644, mtime: new Date(0) }, await readFile(join(dir, f)));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

const db = await testing.createTestDatabase('bench-ttl');
const { prefix: p, cleanup } = testing.testRedisPrefix('bench-ttl');
const prefix = p.replace(/:$/, '');
const home = await mkdtemp(join(tmpdir(), 'slipway-bench-'));
await chmod(home, 0o755);
const masterKey = randomBytes(32).toString('base64');
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const redis = new Redis(testing.TEST_REDIS_URL, { maxRetriesPerRequest: null });
const queue = new Queue('deploy', { connection: redis, prefix });
const blobs = blob.createBlobStore({ BLOB_DIR: join(home, 'blobs') });
const edgePort = await testing.freePort();
const env = {
  PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL: testing.TEST_REDIS_URL, SLIPWAY_MASTER_KEY: masterKey, SLIPWAY_HOME: home,
  QUEUE_PREFIX: prefix, HOST: '127.0.0.1', LOG_LEVEL: 'warn', EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: `localhost:${edgePort}`,
};
const edge = testing.startProcess(process.execPath, [join(ROOT, 'apps/edge/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: String(edgePort) } });
const worker = testing.startProcess(process.execPath, [join(ROOT, 'apps/build-worker/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: '0', LOG_LEVEL: 'log' } });
await worker.waitForOutput(/consuming queue/, 30_000);
await testing.waitFor(() => fetch(`http://127.0.0.1:${edgePort}/health/live`).then((r) => r.ok), { timeoutMs: 30_000, what: 'edge' });

async function application() {
  const slug = `bench-${randomBytes(3).toString('hex')}`;
  const owner = await client.query('INSERT INTO owners (email) VALUES ($1) RETURNING id', [`${slug}@example.com`]);
  return (await client.query('INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id', [owner.rows[0].id, slug])).rows[0].id;
}

async function timeToLive(applicationId, source) {
  const id = randomUUID();
  const started = performance.now();
  const stored = await blobs.put(blob.sourceKey(id), Readable.from([source]));
  await client.query(`INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at) VALUES ($1, $2, 'queued', $3, $4, $5, now() + interval '15 minutes')`, [id, applicationId, JSON.stringify(contract.pendingSteps()), blob.sourceKey(id), stored.bytes]);
  await queue.add('deploy', { deploymentId: id, applicationId }, { jobId: id });
  const row = await testing.waitFor(async () => {
    const { rows } = await client.query('SELECT status, error, steps FROM deployments WHERE id = $1', [id]);
    return rows[0].status === 'succeeded' || rows[0].status === 'failed' ? rows[0] : undefined;
  }, { timeoutMs: 180_000, intervalMs: 25 });
  const ms = performance.now() - started;
  if (row.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(row.error)}`);
  return { ms, steps: Object.fromEntries(row.steps.map((s) => [s.name, s.durationMs])) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
try {
  for (const fixture of ['static-site', 'node-server']) {
    const source = await sourceTar(join(FIXTURES, fixture));
    const cold = [];
    const warm = [];
    let lastSteps;
    for (let i = 0; i < RUNS; i += 1) {
      const app = await application();
      cold.push((await timeToLive(app, source)).ms);
      const w = await timeToLive(app, source);
      warm.push(w.ms);
      lastSteps = w.steps;
    }
    results.push({ fixture, cold, warm, lastSteps });
  }
} finally {
  await worker.stop();
  await edge.stop();
  await queue.close();
  redis.disconnect();
  await client.end();
  await cleanup();
  await db.drop();
  await rm(home, { recursive: true, force: true });
}

const f = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(`\ntime to live: accept → succeeded (${RUNS} runs each, median / min / max), ${process.version}, ${(await import('node:os')).cpus().length} cores\n`);
console.log('| project | cache | median | min | max | target |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  const target = r.fixture === 'static-site' ? '< 3 s' : '< 15 s (warm)';
  console.log(`| ${r.fixture} | cold | ${f(median(r.cold))} | ${f(Math.min(...r.cold))} | ${f(Math.max(...r.cold))} | ${target} |`);
  console.log(`| ${r.fixture} | warm | ${f(median(r.warm))} | ${f(Math.min(...r.warm))} | ${f(Math.max(...r.warm))} | ${target} |`);
}
console.log('\nlast warm run, step durations (ms):');
for (const r of results) console.log(`  ${r.fixture}: ${JSON.stringify(r.lastSteps)}`);
// `pnpm bench` (bench/run.mjs) reads the figures from here.
if (process.env.BENCH_RESULT_FILE) {
  await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(Object.fromEntries(results.flatMap((r) => [[`${r.fixture}.coldMs`, median(r.cold)], [`${r.fixture}.warmMs`, median(r.warm)]]))));
}
