import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { issueToken } from '@slipway/crypto';
import {
  TEST_REDIS_URL,
  createTestDatabase,
  freePort,
  serviceTestEnv,
  startProcess,
  testRedisPrefix,
  waitFor,
  type RunningProcess,
  type TestDatabase,
} from '@slipway/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { makeTar } from './support/archives.js';
import { archiveEnvelope, holdUpload, send, sendRefusable, type RefusableResult } from './support/http.js';
import { hostileLongHeader, tarHeader, zipWithMetadata } from './support/hostile-archives.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const MiB = 1024 * 1024;
const IDLE_SECONDS = 2;
/** RSS the gateway may gain across the 20 hostile uploads (it parked +104 MiB with four before). */
const MAX_GROWTH_MIB = 40;

/** VmRSS of a process, in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

/**
 * The gateway as a real process (apps/gateway/dist, built first), reached over real HTTP: its
 * memory stays flat whatever the uploads claim about themselves, and the upload slots are
 * counted across processes (two gateways on one database and Redis).
 */
describe('gateway memory and upload slots under hostile uploads (real processes, Postgres, Redis)', () => {
  let db: TestDatabase;
  let sql: pg.Pool;
  let dir: string;
  let ownerId: string;
  const redis = testRedisPrefix('upload-memory');
  const gateways: { process: RunningProcess; url: string }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('upload_memory');
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    dir = await mkdtemp(join(tmpdir(), 'slipway-upload-memory-'));
    ownerId = (await sql.query<{ id: string }>(`INSERT INTO owners (email) VALUES ('memory@example.com') RETURNING id`)).rows[0]!.id;
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const child = startProcess(process.execPath, [MAIN], {
        env: serviceTestEnv(db.url, {
          PATH: process.env['PATH']!,
          PORT: String(port),
          LOG_LEVEL: 'warn',
          NO_COLOR: '1',
          BLOB_DIR: join(dir, 'blobs'),
          UPLOAD_TMP_DIR: join(dir, 'uploads'),
          QUEUE_PREFIX: redis.prefix.replace(/:$/, ''),
          UPLOAD_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS),
        }),
      });
      const url = `http://127.0.0.1:${port}`;
      gateways.push({ process: child, url });
      await waitFor(async () => (await send(`${url}/health/ready`).catch(() => ({ status: 0 }))).status === 200, {
        what: `gateway ${i} to be ready`,
        timeoutMs: 60_000,
      });
    }
  });
  afterAll(async () => {
    for (const g of gateways) await g.process.stop('SIGKILL');
    await sql.end();
    await redis.cleanup();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function createKey(): Promise<{ id: string; key: string }> {
    const app = await sql.query<{ id: string }>(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id`, [
      ownerId,
      `m-${randomBytes(4).toString('hex')}`,
    ]);
    const token = issueToken('api_key');
    await sql.query(`INSERT INTO api_keys (application_id, name, prefix, key_hash) VALUES ($1, 'test', $2, $3)`, [app.rows[0]!.id, token.prefix, token.hash]);
    return { id: app.rows[0]!.id, key: token.token };
  }

  function upload(url: string, key: string, archive: Buffer | AsyncIterable<Buffer>): Promise<RefusableResult> {
    const { head, tail, contentType } = archiveEnvelope();
    async function* body(): AsyncGenerator<Buffer> {
      yield head;
      if (Buffer.isBuffer(archive)) yield archive;
      else yield* archive;
      yield tail;
    }
    return sendRefusable(`${url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'transfer-encoding': 'chunked' },
      body: body(),
    });
  }

  it('two gateway processes count the same uploads: a key with 2 uploads on one gets 429 too_many_uploads on the other', async () => {
    const [a, b] = gateways as [(typeof gateways)[0], (typeof gateways)[0]];
    const { id, key } = await createKey();
    const held = [holdUpload(`${a.url}/api/v1/deploy`, key), holdUpload(`${a.url}/api/v1/deploy`, key)];
    const tiny = await makeTar([{ name: 'index.html', content: 'tiny' }]);
    const leases = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      // Gateway A has taken both uploads' slots (the leases are in Redis) ...
      await waitFor(async () => (await leases.zcard(`${redis.prefix}upload-slots:application:${id}`)) === 2, {
        what: 'gateway A to count the held uploads',
        timeoutMs: 10_000,
      });
      // ... and gateway B refuses the key's third upload.
      const viaB = await upload(b.url, key, tiny);
      expect({ status: viaB.status, code: viaB.json?.code, retryAfter: viaB.headers['retry-after'] }).toEqual({
        status: 429,
        code: 'too_many_uploads',
        retryAfter: '5',
      });
    } finally {
      for (const h of held) h.stop();
      leases.disconnect();
    }
    await Promise.all(held.map((h) => h.answered));
    await waitFor(async () => (await upload(b.url, key, tiny)).status === 202, { what: 'the slots to come back', timeoutMs: 10_000, intervalMs: 100 });
  });

  /** 1 GiB of zeros, gzipped as the gateway reads it: a bomb that is not even a tar. */
  async function* gzipBomb(): AsyncGenerator<Buffer> {
    const gzip = createGzip();
    const zeros = Buffer.alloc(MiB);
    const feed = (async () => {
      for (let i = 0; i < 1024 && !gzip.destroyed; i++)
        if (!gzip.write(zeros)) await new Promise((resolve) => (gzip.once('drain', resolve), gzip.once('close', resolve)));
      gzip.end();
    })();
    try {
      for await (const chunk of gzip) yield chunk as Buffer;
    } finally {
      gzip.destroy();
      await feed.catch(() => undefined);
    }
  }
  /** A real tar.gz whose one file declares 100 MiB of zeros (a bomb inside a valid tar). */
  async function* tarBomb(): AsyncGenerator<Buffer> {
    async function* raw(): AsyncGenerator<Buffer> {
      yield tarHeader({ name: 'zeros.bin', type: '0', size: 100 * MiB });
      for (let i = 0; i < 100; i++) yield Buffer.alloc(MiB);
    }
    const gzip = createGzip();
    const feed = (async () => {
      for await (const chunk of raw())
        if (gzip.destroyed || (!gzip.write(chunk) && !(await new Promise((r) => (gzip.once('drain', () => r(true)), gzip.once('close', () => r(false)))))))
          break;
      gzip.end();
    })();
    try {
      for await (const chunk of gzip) yield chunk as Buffer;
    } finally {
      gzip.destroy();
      await feed.catch(() => undefined);
    }
  }
  async function* drip(): AsyncGenerator<Buffer> {
    yield tarHeader({ name: 'slow.bin', type: '0', size: MiB });
    await new Promise((resolve) => setTimeout(resolve, (IDLE_SECONDS + 3) * 1000));
  }
  const manyEntries = () => {
    const zip = zipWithMetadata({});
    zip.writeUInt16LE(65_535, zip.length - 14);
    zip.writeUInt16LE(65_535, zip.length - 12);
    return zip;
  };

  it(`RSS stays flat across 20 hostile uploads, four at a time (growth < ${MAX_GROWTH_MIB} MiB)`, async () => {
    const { url, process: gateway } = gateways[0]!;
    const pid = gateway.child.pid!;
    type Hostile = [string, () => Buffer | AsyncIterable<Buffer>, number, string];
    const hostile: Hostile[] = [
      ...[1, 2, 3, 4].map((i): Hostile => [
        `gzipped PAX header declaring 48 MiB #${i}`,
        () => hostileLongHeader('x', 48 * MiB, 48 * MiB, true),
        400,
        'too_large',
      ]),
      ['PAX global header declaring 48 MiB', () => hostileLongHeader('g', 48 * MiB, 32 * MiB, false), 400, 'too_large'],
      ['PAX header declaring 1 TiB', () => hostileLongHeader('x', 2 ** 40, 32 * MiB, false), 400, 'too_large'],
      ['PAX header declaring 48 MiB, raw', () => hostileLongHeader('x', 48 * MiB, 48 * MiB, false), 400, 'too_large'],
      ['gzipped GNU long name declaring 48 MiB', () => hostileLongHeader('L', 48 * MiB, 48 * MiB, true), 400, 'too_large'],
      ['GNU long name declaring 48 MiB', () => hostileLongHeader('L', 48 * MiB, 32 * MiB, false), 400, 'too_large'],
      ['GNU long link name declaring 48 MiB', () => hostileLongHeader('K', 48 * MiB, 32 * MiB, false), 400, 'too_large'],
      ['gzip bomb (1 GiB of zeros)', gzipBomb, 400, 'too_large'],
      ['gzip bomb #2', gzipBomb, 400, 'too_large'],
      ['tar.gz whose file is 100 MiB of zeros', tarBomb, 400, 'too_large'],
      ['slow drip', drip, 408, 'upload_stalled'],
      ['slow drip #2', drip, 408, 'upload_stalled'],
      [
        'zip entry with 64 KiB extra field and a comment',
        () => zipWithMetadata({ extraBytes: 65_530, commentBytes: 65_535, archiveCommentBytes: 65_535 }),
        400,
        'too_large',
      ],
      ['zip declaring 65535 entries', manyEntries, 400, 'too_large'],
      ['zip with the largest archive comment', () => zipWithMetadata({ archiveCommentBytes: 65_535 }), 202, ''],
      ['gzipped GNU long link name declaring 1 TiB', () => hostileLongHeader('K', 2 ** 40, 48 * MiB, true), 400, 'too_large'],
      ['gzipped PAX global header declaring 48 MiB', () => hostileLongHeader('g', 48 * MiB, 48 * MiB, true), 400, 'too_large'],
    ];
    expect(hostile).toHaveLength(20);
    // Warm up (code paths, pools) with one accepted and one refused upload, then settle.
    await upload(url, (await createKey()).key, await makeTar([{ name: 'index.html', content: 'warm' }]));
    await upload(url, (await createKey()).key, hostileLongHeader('x', 48 * MiB, MiB, false));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rowsBefore = (await sql.query(`SELECT count(*)::int AS n FROM deployments`)).rows[0].n as number;
    const before = await rssMiB(pid);
    let peak = before;
    const sampler = setInterval(
      () =>
        void rssMiB(pid).then(
          (rss) => (peak = Math.max(peak, rss)),
          () => undefined,
        ),
      20,
    );
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < hostile.length; i += 4) {
        const batch = hostile.slice(i, i + 4);
        const answers = await Promise.all(batch.map(async ([, body]) => upload(url, (await createKey()).key, body())));
        for (const [j, answer] of answers.entries()) {
          const [what, , status, code] = batch[j]!;
          // A refusal may reach the client as the connection cut under its write.
          const seen = answer.cutOff && status !== 202 ? `${status} ${code}` : `${answer.status} ${answer.json?.code ?? ''}`.trim();
          outcomes.push(`${what}: ${seen}`);
        }
      }
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - before;
    console.log(`gateway RSS across 20 hostile uploads: before ${before.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB, growth ${growth.toFixed(1)} MiB`);
    // Both at once, so a failure shows the answers and the memory together.
    expect({ outcomes, rssGrowth: growth < MAX_GROWTH_MIB ? 'flat' : `+${growth.toFixed(1)} MiB` }).toEqual({
      outcomes: hostile.map(([what, , status, code]) => `${what}: ${`${status} ${code}`.trim()}`),
      rssGrowth: 'flat',
    });
    // Nothing of the refused uploads is left behind.
    await waitFor(async () => (await readdir(join(dir, 'uploads')).catch(() => [])).length === 0, { what: 'spool dirs to go', timeoutMs: 10_000 });
    // Only the valid zip became a deployment.
    expect((await sql.query(`SELECT count(*)::int AS n FROM deployments`)).rows[0].n).toBe(rowsBefore + 1);
  });
});
