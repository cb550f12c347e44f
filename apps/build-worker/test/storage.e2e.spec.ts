import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, sourceTar, waitFor } from '@slipway/testing';

/**
 * Storage lifecycle through the real worker process (real Postgres, Redis, blob dir): a source is
 * deleted when its deployment ends, however it ends; releases beyond RELEASES_KEPT are pruned
 * after a successful release, rows and artifacts; an artifact over the owner's quota fails the
 * deploy with storage_quota_exceeded and leaves nothing behind.
 */
describe('storage lifecycle in the build worker (real worker process, Postgres, Redis, blob dir)', () => {
  let h: DeployHarness;
  let edge: Server;

  beforeAll(async () => {
    h = await DeployHarness.create('worker-storage');
    // Stands in for the edge's internal hand-off endpoint (static releases need only its answer).
    const edgePort = await freePort();
    edge = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'healthy' })));
    await new Promise<void>((resolve) => edge.listen(edgePort, '127.0.0.1', resolve));
    // `go` is the plan with a tiny quota here; every other plan keeps its default.
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`, RELEASES_KEPT: '2', STORAGE_QUOTAS: 'go=200' });
  }, 60_000);

  afterAll(async () => {
    await h.close();
    edge.close();
  });

  const sourceOf = async (deploymentId: string) =>
    (await h.pg.query(`SELECT source_key, source_bytes FROM deployments WHERE id = $1`, [deploymentId])).rows[0] as {
      source_key: string | null;
      source_bytes: string;
    };
  const releasesOf = async (applicationId: string) =>
    (
      await h.pg.query(`SELECT r.id, r.artifact_key, r.artifact_bytes, r.deployment_id FROM releases r WHERE r.application_id = $1 ORDER BY r.created_at`, [
        applicationId,
      ])
    ).rows as { id: string; artifact_key: string; artifact_bytes: string; deployment_id: string }[];
  /** The worker cleans up right after it commits the final status: polled, with a deadline. */
  const sourceDeleted = (deploymentId: string, key: string) =>
    waitFor(async () => ((await sourceOf(deploymentId)).source_key === null && !(await h.blobs.exists(key)) ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: `the source of ${deploymentId} to be deleted`,
    });
  const releasesSettled = (applicationId: string, count: number) =>
    waitFor(async () => ((await releasesOf(applicationId)).length === count ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: `${count} releases kept`,
    });
  /** Blobs go right after their rows (a prune deletes rows, then artifacts): polled too. */
  const unnamedArtifacts = async () => {
    const named = new Set((await h.pg.query(`SELECT artifact_key FROM releases`)).rows.map((r: { artifact_key: string }) => r.artifact_key));
    return (await h.blobs.list('releases/')).filter((key) => !named.has(key));
  };
  const deployStatic = async (applicationId: string) => {
    const id = await h.deployFixture(applicationId, 'static-site');
    const row = await h.waitForFinal(id);
    expect(row.error).toBeNull();
    return id;
  };

  it('deletes the source once the deployment succeeded, and records what the release stores', async () => {
    const appId = await h.createApplication();
    const id = await h.deployFixture(appId, 'static-site');
    const key = (await sourceOf(id)).source_key!;
    expect(await h.blobs.exists(key)).toBe(true);
    expect((await h.waitForFinal(id)).status).toBe('succeeded');
    await sourceDeleted(id, key);
    const [release] = await releasesOf(appId);
    expect(Number(release!.artifact_bytes)).toBe((await h.blobs.stat(release!.artifact_key))!.bytes);
  });

  it('deletes the source once the deployment failed (at analyze), and keeps no artifact of it', async () => {
    const appId = await h.createApplication();
    const artifactsBefore = await h.blobs.list('releases/');
    const id = await h.deploy(appId, await sourceTar(join(FIXTURES, 'static-site'), { 'package.json': '{ not json' }));
    const key = (await sourceOf(id)).source_key!;
    const row = await h.waitForFinal(id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatchObject({ code: 'invalid_package_json', step: 'analyze' });
    await sourceDeleted(id, key);
    expect(await h.blobs.list('releases/')).toEqual(artifactsBefore);
  });

  it('keeps the newest RELEASES_KEPT releases after each success; an older kept one stays a rollback target, a pruned one is gone with its artifact', async () => {
    const appId = await h.createApplication();
    for (let n = 0; n < 3; n += 1) await deployStatic(appId);
    await releasesSettled(appId, 2);
    const kept = await releasesOf(appId);
    expect(kept).toHaveLength(2);
    const artifacts = (await h.blobs.list('releases/')).filter((key) => kept.some((r) => r.artifact_key === key));
    expect(artifacts).toHaveLength(2);
    // The first release is gone (row and artifact): 3 deployments, 2 releases, and no artifact no row names.
    await waitFor(async () => ((await unnamedArtifacts()).length === 0 ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the pruned artifact to be deleted',
    });

    // Roll back to the older kept release; the next success keeps the 2 newest: the rollback
    // target stays while it is live, then goes as the oldest.
    const [older, newer] = kept as [(typeof kept)[0], (typeof kept)[0]];
    await h.pg.query(`UPDATE applications SET live_release_id = $1 WHERE id = $2`, [older.id, appId]);
    const fourth = await deployStatic(appId);
    await waitFor(async () => ((await releasesOf(appId)).some((r) => r.id === older.id) ? undefined : true), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the old rollback target to be pruned',
    });
    const after = await releasesOf(appId);
    expect(after.map((r) => [r.id, r.deployment_id])).toEqual([
      [newer.id, expect.any(String)],
      [expect.any(String), fourth],
    ]);
    await waitFor(async () => ((await h.blobs.exists(older.artifact_key)) ? undefined : true), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the pruned artifact to be deleted',
    });
    expect(await h.blobs.exists(newer.artifact_key)).toBe(true);
    expect(await unnamedArtifacts()).toEqual([]);
  });

  it("fails a deploy whose artifact would take the owner over its plan's quota: storage_quota_exceeded, nothing kept", async () => {
    const appId = await h.createApplication();
    await h.pg.query(`UPDATE owners SET plan = 'go' WHERE id = (SELECT owner_id FROM applications WHERE id = $1)`, [appId]);
    const artifactsBefore = await h.blobs.list('releases/');
    const id = await h.deployFixture(appId, 'static-site');
    const key = (await sourceOf(id)).source_key!;
    const row = await h.waitForFinal(id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatchObject({ code: 'storage_quota_exceeded', step: 'package' });
    expect(row.error!.message).toMatch(/over the go plan's quota of 200 B/);
    await sourceDeleted(id, key);
    expect(await releasesOf(appId)).toEqual([]);
    // The packed artifact is deleted after the source (same clean-up, right after the failure).
    await waitFor(async () => (JSON.stringify(await h.blobs.list('releases/')) === JSON.stringify(artifactsBefore) ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the refused artifact to be deleted',
    });
  });
});
