import { LocalBlobStore, sourceKey } from '@slipway/blob';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from '@slipway/testing';
import { readdir } from 'node:fs/promises';
import { filesForm, multipart, send, type Part } from './support/http.js';
import { makeTar, makeTarGz, makeZip, readTar } from './support/archives.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const DOC = 'http://localhost:3000/api/v1#error-';

describe('POST /api/v1/deploy and GET /api/v1/deployments/{taskId} (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let queue: Queue;
  beforeAll(async () => {
    gw = await startGateway('deploy');
    queue = new Queue('deploy', { connection: { url: TEST_REDIS_URL }, prefix: gw.redisPrefix });
  });
  afterAll(async () => {
    await queue.close();
    await gw.close();
  });

  const deploy = (app: TestApplication, parts: Part[]) => {
    const { body, contentType } = multipart(parts);
    return send(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body });
  };
  const poll = (app: TestApplication, taskId: string) => send(`${gw.url}/api/v1/deployments/${taskId}`, { headers: { authorization: `Bearer ${app.key}` } });
  const blobs = () => new LocalBlobStore(gw.blobDir);

  it('accepts files + paths: 202 {taskId, status}, the row committed, the job enqueued with jobId = taskId, the source tar stored', async () => {
    const app = await gw.createApplication();
    const response = await deploy(app, filesForm({ 'index.html': '<h1>hi</h1>', 'src/Café.ts': 'export {}' }));
    expect(response.status).toBe(202);
    expect(response.json).toEqual({ taskId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'queued' });
    const { taskId } = response.json;
    // Server-Timing: the upload, then each step after the last byte, then their sum.
    const timing = String(response.headers['server-timing']);
    expect(timing).toMatch(/^upload;dur=[\d.]+, store;dur=[\d.]+, row;dur=[\d.]+, queue;dur=[\d.]+, accept;dur=[\d.]+$/);
    const dur = Object.fromEntries([...timing.matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
    expect(dur.accept).toBeCloseTo(dur.store + dur.row + dur.queue, 0);

    const row = (await gw.sql.query('SELECT application_id, status, source_key, source_bytes, steps, deadline_at FROM deployments WHERE id = $1', [taskId]))
      .rows[0];
    expect(row).toMatchObject({ application_id: app.id, status: 'queued', source_key: sourceKey(taskId) });
    expect(row.steps.map((s: { name: string }) => s.name)).toEqual(['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release']);
    expect(row.steps[0]).toEqual({ name: 'receive', status: 'pending', startedAt: null, finishedAt: null, durationMs: null, log: '' });
    expect(row.deadline_at.getTime()).toBeGreaterThan(Date.now());

    const job = await queue.getJob(taskId);
    expect(job?.id).toBe(taskId);
    expect(job?.name).toBe('deploy');
    expect(job?.data).toEqual({ deploymentId: taskId, applicationId: app.id });

    const stat = await blobs().stat(sourceKey(taskId));
    expect(Number(row.source_bytes)).toBe(stat!.bytes);
    const entries = await readTar(await blobs().get(sourceKey(taskId)));
    expect([...entries.keys()]).toEqual(['index.html', 'src/Café.ts']);
    expect(entries.get('index.html')).toEqual({ mode: 0o644, type: 'file', content: '<h1>hi</h1>' });
    expect(await readdir(gw.uploadDir)).toEqual([]);
  });

  it.each([
    [
      'tar',
      () =>
        makeTar([
          { name: './', type: 'directory' },
          { name: './run.sh', content: 'echo hi', mode: 0o755 },
          { name: './a/b.txt', content: 'b' },
        ]),
    ],
    [
      'tar.gz',
      () =>
        makeTarGz([
          { name: 'run.sh', content: 'echo hi', mode: 0o755 },
          { name: 'a/', type: 'directory' },
          { name: 'a/b.txt', content: 'b' },
        ]),
    ],
    [
      'zip',
      async () =>
        makeZip([
          { name: 'run.sh', content: 'echo hi', unixMode: 0o100755 },
          { name: 'a/', unixMode: 0o040755 },
          { name: 'a/b.txt', content: 'b', deflate: true },
        ]),
    ],
  ])('accepts a %s archive recognised by content (any file name) and stores the same normalised tar', async (_kind, build) => {
    const app = await gw.createApplication();
    const response = await deploy(app, [{ name: 'archive', filename: 'source.bin', content: await build() }]);
    expect(response.status).toBe(202);
    const entries = await readTar(await blobs().get(sourceKey(response.json.taskId)));
    expect(Object.fromEntries(entries)).toEqual({
      'run.sh': { mode: 0o755, type: 'file', content: 'echo hi' },
      'a/b.txt': { mode: 0o644, type: 'file', content: 'b' },
    });
  });

  it('polls a queued task with its steps; another application never sees it (404 not_found)', async () => {
    const a = await gw.createApplication();
    const b = await gw.createApplication();
    const { taskId } = (await deploy(a, filesForm({ 'index.html': 'a' }))).json;
    const mine = await poll(a, taskId);
    expect(mine.status).toBe(200);
    expect(mine.json).toEqual({
      taskId,
      status: 'queued',
      steps: expect.arrayContaining([expect.objectContaining({ name: 'build', status: 'pending' })]),
      spec: null,
      warnings: [],
      hazards: [],
      createdAt: expect.any(String),
      startedAt: null,
      finishedAt: null,
      queuedSeconds: expect.any(Number),
    });
    expect(mine.json.queuedSeconds).toBeGreaterThanOrEqual(0);
    for (const response of [
      await poll(b, taskId),
      await poll(a, '00000000-0000-4000-8000-000000000000'),
      await poll(a, 'not-a-uuid'),
      await poll(a, "1' OR '1'='1"),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ error: expect.any(String), code: 'not_found', documentation: `${DOC}not_found` });
    }
  });

  it('reports url once succeeded and error once failed', async () => {
    const app = await gw.createApplication();
    const ok = (
      await gw.sql.query(`INSERT INTO deployments (application_id, status, started_at, finished_at) VALUES ($1, 'succeeded', now(), now()) RETURNING id`, [
        app.id,
      ])
    ).rows[0].id;
    const failed = (
      await gw.sql.query(`INSERT INTO deployments (application_id, status, error, finished_at) VALUES ($1, 'failed', $2, now()) RETURNING id`, [
        app.id,
        { code: 'build_failed', message: 'npm run build exited 1', step: 'build' },
      ])
    ).rows[0].id;
    const succeeded = await poll(app, ok);
    expect(succeeded.json).toMatchObject({ status: 'succeeded', url: `http://${app.slug}.localhost:8080`, finishedAt: expect.any(String) });
    expect(succeeded.json.error).toBeUndefined();
    const failure = await poll(app, failed);
    expect(failure.json).toMatchObject({ status: 'failed', error: { code: 'build_failed', message: 'npm run build exited 1', step: 'build' } });
    expect(failure.json.url).toBeUndefined();
  });

  it('lets exactly one of two simultaneous deploys through; the other gets 409 with the in-flight taskId', async () => {
    const app = await gw.createApplication();
    const [one, two] = await Promise.all([deploy(app, filesForm({ 'a.txt': 'one' })), deploy(app, filesForm({ 'a.txt': 'two' }))]);
    const statuses = [one.status, two.status].sort();
    expect(statuses).toEqual([202, 409]);
    const accepted = one.status === 202 ? one : two;
    const refused = one.status === 409 ? one : two;
    expect(refused.json).toEqual({
      error: expect.any(String),
      code: 'deploy_in_progress',
      documentation: `${DOC}deploy_in_progress`,
      taskId: accepted.json.taskId,
    });
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [app.id])).rows[0].n).toBe(1);
    // The loser's source blob was deleted: every stored source belongs to a committed row.
    const keys = (await gw.sql.query('SELECT source_key FROM deployments WHERE source_key IS NOT NULL ORDER BY source_key')).rows.map(
      (r: { source_key: string }) => r.source_key,
    );
    expect(await blobs().list('sources/')).toEqual(keys);
  });

  it('still answers 202 when the enqueue fails after the commit (the row is durable; the reconciler enqueues it)', async () => {
    const app = await gw.createApplication();
    const redis = new Redis(TEST_REDIS_URL);
    // A key of the wrong type under the queue's meta key makes BullMQ's add script fail.
    const meta = `${gw.redisPrefix}:deploy:meta`;
    const saved = await redis.hgetall(meta);
    await redis.del(meta);
    await redis.set(meta, 'not-a-hash');
    try {
      const response = await deploy(app, filesForm({ 'index.html': 'x' }));
      expect(response.status).toBe(202);
      const { taskId } = response.json;
      expect((await gw.sql.query('SELECT status FROM deployments WHERE id = $1', [taskId])).rows[0]).toEqual({ status: 'queued' });
      expect(await redis.exists(`${gw.redisPrefix}:deploy:${taskId}`)).toBe(0);
      expect(await blobs().exists(sourceKey(taskId))).toBe(true);
    } finally {
      await redis.del(meta);
      if (Object.keys(saved).length) await redis.hset(meta, saved);
      redis.disconnect();
    }
  });

  it('answers 409 before reading the upload while a deploy is building', async () => {
    const app = await gw.createApplication();
    const active = (await gw.sql.query(`INSERT INTO deployments (application_id, status) VALUES ($1, 'building') RETURNING id`, [app.id])).rows[0].id;
    const response = await deploy(app, filesForm({ 'a.txt': 'x' }));
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ code: 'deploy_in_progress', taskId: active });
  });

  it('refuses the 21st deploy within a rolling hour with 429, retryAfterSeconds and Retry-After; refusals do not count', async () => {
    const app = await gw.createApplication();
    // 20 finished deploys in the last hour, the oldest 50 minutes ago (so a slot opens in ~10 minutes).
    await gw.sql.query(
      `INSERT INTO deployments (application_id, status, created_at)
       SELECT $1, 'succeeded', now() - make_interval(mins => 50 - i) FROM generate_series(0, 19) AS i`,
      [app.id],
    );
    await gw.sql.query(`INSERT INTO deployments (application_id, status, created_at) VALUES ($1, 'failed', now() - interval '61 minutes')`, [app.id]);
    const refused = await deploy(app, filesForm({ 'a.txt': 'x' }));
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: expect.any(String),
      code: 'rate_limited',
      documentation: `${DOC}rate_limited`,
      retryAfterSeconds: expect.any(Number),
    });
    expect(refused.json.retryAfterSeconds).toBeGreaterThan(590);
    expect(refused.json.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect(refused.headers['retry-after']).toBe(String(refused.json.retryAfterSeconds));
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [app.id])).rows[0].n).toBe(21);

    // Once the oldest leaves the window, the next deploy is accepted.
    await gw.sql.query(`UPDATE deployments SET created_at = created_at - interval '11 minutes' WHERE application_id = $1`, [app.id]);
    expect((await deploy(app, filesForm({ 'a.txt': 'x' }))).status).toBe(202);
  });

  it('counts the 20 accepted deploys of the hour (an over-the-wire run)', async () => {
    const app = await gw.createApplication();
    for (let i = 0; i < 20; i++) {
      const response = await deploy(app, filesForm({ 'a.txt': String(i) }));
      expect(response.status).toBe(202);
      await gw.sql.query(`UPDATE deployments SET status = 'succeeded' WHERE id = $1`, [response.json.taskId]);
    }
    const refused = await deploy(app, filesForm({ 'a.txt': 'x' }));
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe('rate_limited');
  });
});
