import { spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRIES } from '@slipway/config';
import { PassThrough, Readable } from 'node:stream';
import { SOURCE_GZIP_LEVEL, createBlobStore, sourceFileMode, sourceKey, type BlobStore } from '@slipway/blob';
import { pendingSteps } from '@slipway/contract';
import { encryptEnvelope, envelopeBinding, keyringFromMasterKey } from '@slipway/crypto';
import { QUEUES } from '@slipway/messaging';
import { startS3Emulator, type S3Emulator } from '@slipway/s3-emulator';
import { startProcess, waitFor, type RunningProcess } from './process.js';
import { TEST_REDIS_URL, testRedisPrefix } from './redis.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import tarStream from 'tar-stream';

/** The repository root (this file is libs/testing/src/…). */
export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const FIXTURES = join(ROOT, 'libs', 'analyzer', 'fixtures');
const WORKER_MAIN = join(ROOT, SERVICE_ENTRIES['build-worker']);
const EDGE_MAIN = join(ROOT, SERVICE_ENTRIES.edge);

export interface DeploymentRow {
  id: string;
  status: string;
  attempts: number;
  steps: { name: string; status: string; log: string; durationMs: number | null; startedAt: string | null; finishedAt: string | null }[];
  spec: Record<string, unknown> | null;
  warnings: { code: string; message: string; path?: string; detail?: string }[];
  hazards: { code: string; severity: string; message: string; path?: string; detail?: string }[];
  error: { code: string; message: string; step: string | null } | null;
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/** A source tar exactly as the gateway stores it (libs/blob source format); `extra` adds or replaces files. */
export async function sourceTar(dir: string, extra: Record<string, string> = {}): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => sink.on('end', resolve));
  pack.pipe(sink);
  for (const path of await listFiles(dir)) {
    if (path.startsWith('node_modules/') || path.startsWith('dist/') || path in extra) continue;
    const content = await readFile(join(dir, path));
    pack.entry({ name: path, mode: sourceFileMode((await stat(join(dir, path))).mode), uid: 0, gid: 0, mtime: new Date(0) }, content);
  }
  for (const [path, content] of Object.entries(extra)) pack.entry({ name: path, mode: 0o644, mtime: new Date(0) }, content);
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/**
 * The world a build worker lives in: its own database, Redis prefix, blob and build directories,
 * an application, and a way to create deployments exactly as the gateway does
 * (source blob, then the row, then the job).
 */
/** `EDGE_DATA_PLANE=nginx` in the test run's environment: every edge the harness starts has nginx in front (CI runs the edge's e2e tests with both planes). */
const EDGE_PLANE: Record<string, string> = process.env['EDGE_DATA_PLANE'] ? { EDGE_DATA_PLANE: process.env['EDGE_DATA_PLANE'] } : {};

export class DeployHarness {
  readonly masterKey = randomBytes(32).toString('base64');
  readonly keyring = keyringFromMasterKey(this.masterKey);
  db!: TestDatabase;
  pg!: pg.Client;
  redis!: Redis;
  queue!: Queue;
  blobs!: BlobStore;
  prefix!: string;
  home!: string;
  /** With `{ s3: true }`: the S3-protocol emulator that holds the blobs of this harness and its processes. */
  s3?: S3Emulator;
  private cleanupRedis!: () => Promise<void>;
  private readonly workers: RunningProcess[] = [];

  /** `s3: true` keeps blobs in an S3-protocol emulator (libs/s3-emulator) instead of `<home>/blobs`. */
  static async create(label: string, options: { s3?: boolean } = {}): Promise<DeployHarness> {
    const h = new DeployHarness();
    h.db = await createTestDatabase(label);
    h.pg = new pg.Client({ connectionString: h.db.url });
    await h.pg.connect();
    const { prefix, cleanup } = testRedisPrefix(label);
    h.prefix = prefix.replace(/:$/, '');
    h.cleanupRedis = cleanup;
    h.redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    h.queue = new Queue(QUEUES.deploy.name, { connection: h.redis, prefix: h.prefix });
    h.home = await mkdtemp(join(tmpdir(), `slipway-${label}-`));
    // Like any SLIPWAY_HOME: traversable, so the unprivileged build user reaches its workspace.
    await chmod(h.home, 0o755);
    if (options.s3) h.s3 = await startS3Emulator();
    h.blobs = createBlobStore(h.s3 ? h.s3.env : { BLOB_DIR: join(h.home, 'blobs') });
    return h;
  }

  workerEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      DATABASE_URL: this.db.url,
      REDIS_URL: TEST_REDIS_URL,
      SLIPWAY_MASTER_KEY: this.masterKey,
      SLIPWAY_HOME: this.home,
      QUEUE_PREFIX: this.prefix,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'log',
      RECONCILE_INTERVAL_MS: '2000',
      // Node toolchains and package managers: one machine cache for every test (fetched once, as on
      // a running platform), not one per harness. Projects that declare no Node run on 24 (issue 18).
      NODE_TOOLCHAIN_DIR: process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test',
      // Behind a TLS-intercepting proxy the platform's processes need its CA to reach the registry.
      ...(process.env['NODE_EXTRA_CA_CERTS'] ? { NODE_EXTRA_CA_CERTS: process.env['NODE_EXTRA_CA_CERTS'] } : {}),
      ...this.s3?.env,
      ...overrides,
    };
  }

  /** Starts the real worker process (built dist) and waits until it consumes the queue. */
  async startWorker(overrides: Record<string, string> = {}): Promise<RunningProcess> {
    const worker = startProcess(process.execPath, [WORKER_MAIN], { cwd: ROOT, env: this.workerEnv(overrides) });
    this.workers.push(worker);
    await worker.waitForOutput(/consuming queue/, 30_000);
    return worker;
  }

  /**
   * Starts the real edge process (built dist) on a free port; resolves once it serves.
   * `options.nodeArgs` / `options.main` (relative to the repo) let benchmarks profile the edge or run another build.
   */
  async startEdge(port: number, overrides: Record<string, string> = {}, options: { nodeArgs?: string[]; main?: string } = {}): Promise<RunningProcess> {
    const main = options.main ? join(ROOT, options.main) : EDGE_MAIN;
    const edge = startProcess(process.execPath, [...(options.nodeArgs ?? []), main], {
      cwd: ROOT,
      env: this.workerEnv({ PORT: String(port), APPS_DOMAIN: `localhost:${port}`, ...EDGE_PLANE, ...overrides }),
    });
    this.workers.push(edge);
    await edge.waitForOutput(/edge listening/, 30_000);
    return edge;
  }

  async createApplication(options: { slug?: string; secrets?: Record<string, string>; cookieSecret?: string } = {}): Promise<string> {
    const slug = options.slug ?? `app-${randomBytes(3).toString('hex')}`;
    const owner = await this.pg.query(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`${slug}@example.com`]);
    const app = await this.pg.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id`, [owner.rows[0].id, slug]);
    const applicationId: string = app.rows[0].id;
    for (const [name, value] of Object.entries(options.secrets ?? {})) {
      await this.pg.query(`INSERT INTO secrets (application_id, name, value) VALUES ($1, $2, $3)`, [
        applicationId,
        name,
        encryptEnvelope(this.keyring, value, envelopeBinding.secret(applicationId, name)),
      ]);
    }
    if (options.cookieSecret) {
      await this.pg.query(`INSERT INTO sign_in_services (application_id, cookie_secret) VALUES ($1, $2)`, [
        applicationId,
        encryptEnvelope(this.keyring, options.cookieSecret, envelopeBinding.cookieSecret(applicationId)),
      ]);
    }
    return applicationId;
  }

  /** What the gateway does on an accepted deploy: source blob, row (queued), then the job. */
  async deploy(applicationId: string, source: Buffer, options: { deadlineMs?: number; enqueue?: boolean; rootDirectory?: string } = {}): Promise<string> {
    const deploymentId = randomUUID();
    const key = sourceKey(deploymentId);
    // Stored as the gateway stores it (libs/blob source format): a gzip-compressed tar.
    const stored = await this.blobs.put(key, Readable.from([gzipSync(source, { level: SOURCE_GZIP_LEVEL })]));
    await this.pg.query(
      `INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, deadline_at, root_directory) VALUES ($1, $2, 'queued', $3, $4, $5, now() + ($6 || ' milliseconds')::interval, $7)`,
      [
        deploymentId,
        applicationId,
        JSON.stringify(pendingSteps()),
        key,
        stored.bytes,
        String(options.deadlineMs ?? 15 * 60_000),
        options.rootDirectory ?? null,
      ],
    );
    if (options.enqueue !== false) await this.queue.add('deploy', { deploymentId, applicationId }, { jobId: deploymentId });
    return deploymentId;
  }

  async deployFixture(applicationId: string, fixture: string, extra: Record<string, string> = {}): Promise<string> {
    return this.deploy(applicationId, await sourceTar(join(FIXTURES, fixture), extra));
  }

  async row(deploymentId: string): Promise<DeploymentRow> {
    const { rows } = await this.pg.query(`SELECT id, status, attempts, steps, spec, warnings, hazards, error FROM deployments WHERE id = $1`, [deploymentId]);
    return rows[0] as DeploymentRow;
  }

  async waitForFinal(deploymentId: string, timeoutMs = 90_000, intervalMs = 200): Promise<DeploymentRow> {
    return waitFor(
      async () => {
        const row = await this.row(deploymentId);
        return row.status === 'succeeded' || row.status === 'failed' ? row : undefined;
      },
      { timeoutMs, intervalMs, what: `deployment ${deploymentId} to finish` },
    );
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.stop('SIGTERM', 20_000)));
  }

  async close(): Promise<void> {
    await this.stopWorkers();
    await this.queue.close();
    this.redis.disconnect();
    await this.pg.end();
    await this.cleanupRedis();
    await this.db.drop();
    await this.s3?.close();
    // A worker a test killed leaves its build disks mounted (the next worker start sweeps them);
    // nothing starts here again, so they go now, or the home cannot be removed (EBUSY).
    await unmountUnder(this.home);
    await rm(this.home, { recursive: true, force: true });
  }
}

/** Detaches every mount below `dir` (deepest first; lazily, so a busy one still goes). */
export async function unmountUnder(dir: string): Promise<void> {
  const points = (await readFile('/proc/mounts', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of points) spawnSync('umount', ['-l', point], { stdio: 'ignore' });
}
