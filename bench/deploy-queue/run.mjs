// bench/deploy-queue: deploy-queue drain time with 1 vs 2 build workers (one static-site deploy
// for each of N applications, all enqueued at once) and deploys/minute sustained across 20
// applications with 2 workers (each application redeploys as soon as its last deploy finished).
// Deploys are created exactly as the gateway does (source blob, row, job), as bench/time-to-live.
// Run: pnpm nx run-many -t build && node bench/deploy-queue/run.mjs
// Env: APPS (20), SUSTAIN_SECONDS (60), BENCH_RESULT_FILE (figures as JSON, for `pnpm bench`).
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fromWorker = createRequire(join(ROOT, 'apps/build-worker/package.json'));
const load = (name) => import(fromWorker.resolve(name));
const [{ default: pg }, { Redis }, { Queue }, { default: tarStream }, blob, contract, testing] = await Promise.all(
  ['pg', 'ioredis', 'bullmq', 'tar-stream', '@slipway/blob', '@slipway/contract', '@slipway/testing'].map(load),
);
const APPS = Number(process.env.APPS ?? 20);
const SUSTAIN_SECONDS = Number(process.env.SUSTAIN_SECONDS ?? 60);

async function sourceTar(dir) {
  const pack = tarStream.pack();
  const chunks = [];
  pack.on('data', (c) => chunks.push(c));
  const done = new Promise((r) => pack.on('end', r));
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const rel = join(e.parentPath ?? e.path, e.name).slice(dir.length + 1);
    pack.entry({ name: rel, mode: 0o644 }, await readFile(join(dir, rel)));
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

const db = await testing.createTestDatabase('bench-queue');
const { prefix: p, cleanup } = testing.testRedisPrefix('bench-queue');
const prefix = p.replace(/:$/, '');
const home = await mkdtemp(join(tmpdir(), 'slipway-bench-queue-'));
await chmod(home, 0o755);
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const redis = new Redis(testing.TEST_REDIS_URL, { maxRetriesPerRequest: null });
const queue = new Queue('deploy', { connection: redis, prefix });
const blobs = blob.createBlobStore({ BLOB_DIR: join(home, 'blobs') });
const edgePort = await testing.freePort();
const env = {
  PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL: testing.TEST_REDIS_URL, SLIPWAY_MASTER_KEY: randomBytes(32).toString('base64'), SLIPWAY_HOME: home,
  QUEUE_PREFIX: prefix, HOST: '127.0.0.1', LOG_LEVEL: 'warn', EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, APPS_DOMAIN: `localhost:${edgePort}`,
};
const edge = testing.startProcess(process.execPath, [join(ROOT, 'apps/edge/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: String(edgePort) } });
let workers = [];

async function startWorkers(n) {
  workers = Array.from({ length: n }, () => testing.startProcess(process.execPath, [join(ROOT, 'apps/build-worker/dist/main.js')], { cwd: ROOT, env: { ...env, PORT: '0', LOG_LEVEL: 'log' } }));
  await Promise.all(workers.map((w) => w.waitForOutput(/consuming queue/, 60_000)));
}
async function stopWorkers() {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
}

async function application(i) {
  const slug = `bench-q${i}-${randomBytes(3).toString('hex')}`;
  const owner = await client.query('INSERT INTO owners (email) VALUES ($1) RETURNING id', [`${slug}@example.com`]);
  return (await client.query('INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id', [owner.rows[0].id, slug])).rows[0].id;
}

async function enqueue(applicationId, source) {
  const id = randomUUID();
  const stored = await blobs.put(blob.sourceKey(id), Readable.from([source]));
  await client.query(`INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at) VALUES ($1, $2, 'queued', $3, $4, $5, now() + interval '15 minutes')`, [id, applicationId, JSON.stringify(contract.pendingSteps()), blob.sourceKey(id), stored.bytes]);
  await queue.add('deploy', { deploymentId: id, applicationId }, { jobId: id });
  return id;
}

async function waitAll(ids, timeoutMs = 600_000) {
  return testing.waitFor(async () => {
    const { rows } = await client.query(`SELECT status FROM deployments WHERE id = ANY($1::uuid[]) AND status IN ('succeeded', 'failed')`, [ids]);
    return rows.length === ids.length ? rows : undefined;
  }, { timeoutMs, intervalMs: 50, what: `${ids.length} deployments` });
}

const figures = {};
try {
  await testing.waitFor(() => fetch(`http://127.0.0.1:${edgePort}/health/live`).then((r) => r.ok), { timeoutMs: 30_000, what: 'edge' });
  const source = await sourceTar(join(ROOT, 'libs/analyzer/fixtures/static-site'));
  const apps = [];
  for (let i = 0; i < APPS; i++) apps.push(await application(i));

  for (const n of [1, 2]) {
    await startWorkers(n);
    await waitAll([await enqueue(apps[0], source)]); // warm-up
    const started = performance.now();
    const ids = await Promise.all(apps.map((a) => enqueue(a, source)));
    const rows = await waitAll(ids);
    figures[`drainMs.${n}`] = performance.now() - started;
    figures[`failed.${n}`] = rows.filter((r) => r.status === 'failed').length;
    if (n === 2) {
      // Sustained: every application redeploys as soon as its previous deploy is terminal.
      let done = 0;
      const until = performance.now() + SUSTAIN_SECONDS * 1000;
      const begun = performance.now();
      await Promise.all(apps.map(async (a) => {
        while (performance.now() < until) {
          await waitAll([await enqueue(a, source)]);
          done += 1;
        }
      }));
      figures.sustainedDeploys = done;
      figures.deploysPerMinute = (done * 60_000) / (performance.now() - begun);
    }
    await stopWorkers();
  }
} finally {
  await stopWorkers();
  await edge.stop();
  await queue.close();
  redis.disconnect();
  await client.end();
  await cleanup();
  await db.drop();
  await rm(home, { recursive: true, force: true });
}

console.log(`\ndeploy queue: ${APPS} applications, static-site fixture, ${process.version}, ${cpus().length} cores\n`);
console.log('| figure | value |');
console.log('|---|---|');
console.log(`| drain ${APPS} deploys, 1 worker | ${(figures['drainMs.1'] / 1000).toFixed(1)} s (${figures['failed.1']} failed) |`);
console.log(`| drain ${APPS} deploys, 2 workers | ${(figures['drainMs.2'] / 1000).toFixed(1)} s (${figures['failed.2']} failed) |`);
console.log(`| deploys/minute sustained, ${APPS} apps, 2 workers (${SUSTAIN_SECONDS} s) | ${figures.deploysPerMinute.toFixed(1)} |`);
if (process.env.BENCH_RESULT_FILE) await writeFile(process.env.BENCH_RESULT_FILE, JSON.stringify(figures));
