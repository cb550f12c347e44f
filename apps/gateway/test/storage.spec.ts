import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { LocalBlobStore, isGzip, sourceKey } from '@slipway/blob';
import { LIMITS } from '@slipway/contract';
import { waitFor } from '@slipway/testing';
import { filesForm, multipart, send, sendRefusable, type Part } from './support/http.js';
import { readTar } from './support/archives.js';
import { DashboardClient } from './support/dashboard-client.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

const MiB = 1024 * 1024;
const QUOTA = 2 * MiB;

/**
 * Storage at the gateway (real HTTP, Postgres, Redis, blob dir): sources are stored compressed,
 * the owner's storage quota refuses a deploy before and after the upload, and the owners' API
 * says what an application stores.
 */
describe('storage: compressed sources and the owner storage quota (real HTTP, Postgres, blob dir)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway('storage', { STORAGE_QUOTAS: `free=${QUOTA}`, RELEASES_KEPT: '2' });
    // The deploy queue's Redis connection comes up after the port: deploys wait for readiness.
    await waitFor(async () => ((await send(`${gw.url}/health/ready`)).status === 200 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: 'the gateway to be ready',
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  const blobs = () => new LocalBlobStore(gw.blobDir);
  const deploy = (app: TestApplication, parts: Part[]) => {
    const { body, contentType } = multipart(parts);
    return sendRefusable(`${gw.url}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType }, body });
  };
  /** A kept release of `app` with an artifact of `bytes` (what the build worker records). */
  const keptRelease = async (app: TestApplication, bytes: number) => {
    const deployment = randomUUID();
    await gw.sql.query(`INSERT INTO deployments (id, application_id, status, steps, finished_at) VALUES ($1, $2, 'succeeded', '[]', now())`, [
      deployment,
      app.id,
    ]);
    const release = randomUUID();
    await gw.sql.query(
      `INSERT INTO releases (id, application_id, deployment_id, kind, artifact_key, artifact_bytes, spec) VALUES ($1, $2, $3, 'static', $4, $5, '{}')`,
      [release, app.id, deployment, `releases/${release}.tar.gz`, bytes],
    );
    return release;
  };

  it('stores a highly compressible source compressed: 24 MiB of zeros kept as a gzip tar of under 1% of it', async () => {
    const app = await gw.createApplication();
    const response = await deploy(app, filesForm({ 'package.json': '{"name":"zeros"}', 'zeros.bin': Buffer.alloc(24 * MiB) }));
    expect(response.status).toBe(202);
    const key = sourceKey(response.json.taskId);
    expect(key).toBe(`sources/${response.json.taskId}.tar.gz`);
    const stored = await blobs().stat(key);
    expect(stored!.bytes).toBeLessThan(0.01 * 24 * MiB);
    const head = Buffer.concat((await (await blobs().get(key)).toArray()) as Buffer[]).subarray(0, 2);
    expect(isGzip(head)).toBe(true);
    const row = (await gw.sql.query('SELECT source_bytes FROM deployments WHERE id = $1', [response.json.taskId])).rows[0];
    expect(Number(row.source_bytes)).toBe(stored!.bytes);
    const entries = await readTar(await blobs().get(key));
    expect(entries.get('zeros.bin')!.content.length).toBe(24 * MiB);
  });

  it("publishes the plans' storage quotas and the releases kept in GET /api/v1, and the new code with its status", async () => {
    const contract = (await send(`${gw.url}/api/v1`)).json;
    expect(contract.limits.storagePerPlan).toEqual({ ...LIMITS.storagePerPlan, free: QUOTA });
    expect(contract.limits.releasesKeptPerApplication).toBe(2);
    expect(contract.errors.codes).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'storage_quota_exceeded', status: 413 })]));
    const deployEndpoint = contract.endpoints.find((e: { path: string }) => e.path === '/api/v1/deploy');
    expect(deployEndpoint.errors).toEqual(expect.arrayContaining([{ code: 'storage_quota_exceeded', status: 413 }]));
  });

  it('refuses a source that would take the owner over its quota once its size is known, and keeps nothing of it', async () => {
    // What the owner stores now: the source in progress of the first test, plus a kept release.
    const app = await gw.createApplication();
    const inFlight = Number((await gw.sql.query(`SELECT COALESCE(sum(source_bytes), 0) AS b FROM deployments WHERE source_key IS NOT NULL`)).rows[0].b);
    await keptRelease(app, QUOTA - inFlight - 256 * 1024);
    const sourcesBefore = await blobs().list('sources/');
    // 512 KiB of random bytes: about as large compressed, more than the 256 KiB left.
    const response = await deploy(app, filesForm({ 'random.bin': randomBytes(512 * 1024) }));
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: 'storage_quota_exceeded', usedBytes: QUOTA - 256 * 1024, quotaBytes: QUOTA, sourceBytes: expect.any(Number) });
    expect(response.json.error).toMatch(/would take your applications' storage to .* over the free plan's storage quota of 2\.0 MiB/);
    expect(await blobs().list('sources/')).toEqual(sourcesBefore);
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1 AND source_key IS NOT NULL', [app.id])).rows[0].n).toBe(0);
  });

  it('refuses before reading the body once the owner stores its whole quota; other owners are not affected', async () => {
    const app = await gw.createApplication();
    await keptRelease(app, 256 * 1024);
    const response = await deploy(app, filesForm({ 'index.html': '<h1>hi</h1>' }));
    expect(response.status).toBe(413);
    expect(response.headers['connection']).toBe('close');
    expect(response.json.code).toBe('storage_quota_exceeded');
    expect(response.json.error).toMatch(/^Your applications already store 2\.0 MiB, over the free plan's storage quota of 2\.0 MiB/);
    expect(response.json).toMatchObject({ usedBytes: QUOTA, quotaBytes: QUOTA });

    // Another owner (its own application) deploys as usual.
    const other = await gw.sql.query<{ id: string }>(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`other-${Date.now()}@example.com`]);
    const otherApp = await gw.createApplication();
    await gw.sql.query('UPDATE applications SET owner_id = $1 WHERE id = $2', [other.rows[0]!.id, otherApp.id]);
    expect((await deploy(otherApp, filesForm({ 'index.html': '<h1>hi</h1>' }))).status).toBe(202);
  });

  it('lets an owner at its quota replace its oldest release: what the deploy will prune does not count', async () => {
    const owner = await gw.sql.query<{ id: string }>(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`full-${Date.now()}@example.com`]);
    const [replacing, nothingToPrune] = [await gw.createApplication(), await gw.createApplication()];
    await gw.sql.query('UPDATE applications SET owner_id = $1 WHERE id = ANY($2::uuid[])', [owner.rows[0]!.id, [replacing.id, nothingToPrune.id]]);
    // 1.5 MiB in two kept releases (RELEASES_KEPT 2: the next success prunes the older, 0.75 MiB)…
    await keptRelease(replacing, 0.75 * MiB);
    await keptRelease(replacing, 0.75 * MiB);
    // …and 0.5 MiB in the other application: the owner stores its whole 2 MiB.
    await keptRelease(nothingToPrune, 0.5 * MiB);
    expect((await deploy(replacing, filesForm({ 'index.html': '<h1>new</h1>' }))).status).toBe(202);
    // The other application's deploy would prune nothing: refused before the upload.
    const refused = await deploy(nothingToPrune, filesForm({ 'index.html': '<h1>new</h1>' }));
    expect(refused.status).toBe(413);
    expect(refused.json).toMatchObject({ code: 'storage_quota_exceeded', quotaBytes: QUOTA });
  });

  it("the owners' API says what an application stores (sources, releases, the owner's quota); another owner sees nothing", async () => {
    const ada = new DashboardClient(gw.url);
    const eve = new DashboardClient(gw.url);
    expect((await ada.signUp(`ada-${Date.now()}@example.com`)).status).toBe(201);
    expect((await eve.signUp(`eve-${Date.now()}@example.com`)).status).toBe(201);
    const created = await ada.post('/applications', { name: 'Stored' });
    expect(created.status).toBe(201);
    const appId: string = created.json.id;
    await keptRelease({ id: appId } as TestApplication, 3000);
    await keptRelease({ id: appId } as TestApplication, 5000);
    await gw.sql.query(`INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes) VALUES ($1, $2, 'building', '[]', $3, 700)`, [
      randomUUID(),
      appId,
      `sources/${randomUUID()}.tar.gz`,
    ]);
    // A finished deployment whose source was deleted counts for nothing.
    await gw.sql.query(
      `INSERT INTO deployments (id, application_id, status, steps, source_key, source_bytes, finished_at) VALUES ($1, $2, 'failed', '[]', NULL, 9999, now())`,
      [randomUUID(), appId],
    );

    const storage = await ada.get(`/applications/${appId}/storage`);
    expect(storage.status).toBe(200);
    expect(storage.json).toEqual({
      sources: { count: 1, bytes: 700 },
      releases: { count: 2, bytes: 8000, kept: 2 },
      caches: { bytes: null },
      owner: { plan: 'free', usedBytes: 8700, quotaBytes: QUOTA },
    });
    expect((await eve.get(`/applications/${appId}/storage`)).status).toBe(404);

    // Making room: a release that is not live can be deleted (its artifact goes); the live one cannot.
    const [first, second] = (
      await gw.sql.query<{ id: string; artifact_key: string }>(`SELECT id, artifact_key FROM releases WHERE application_id = $1 ORDER BY created_at`, [appId])
    ).rows;
    await gw.sql.query('UPDATE applications SET live_release_id = $1 WHERE id = $2', [second!.id, appId]);
    await blobs().put(first!.artifact_key, Readable.from([Buffer.alloc(3000)]));
    expect((await eve.delete(`/applications/${appId}/releases/${first!.id}`)).status).toBe(404);
    expect((await ada.delete(`/applications/${appId}/releases/${second!.id}`)).json).toMatchObject({
      code: 'bad_request',
      error: expect.stringMatching(/live/),
    });
    const removed = await ada.delete(`/applications/${appId}/releases/${first!.id}`);
    expect(removed.status).toBe(200);
    expect(removed.json.releases.map((r: { id: string }) => r.id)).toEqual([second!.id]);
    expect(await blobs().exists(first!.artifact_key)).toBe(false);
    expect((await ada.get(`/applications/${appId}/storage`)).json.releases).toEqual({ count: 1, bytes: 5000, kept: 2 });
    expect((await ada.delete(`/applications/${appId}/releases/${first!.id}`)).status).toBe(404);
  });
});
