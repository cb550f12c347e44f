import { LocalBlobStore } from '@slipway/blob';
import { routesChannel } from '@slipway/messaging';
import { TEST_REDIS_URL, waitFor } from '@slipway/testing';
import { Redis } from 'ioredis';
import { filesForm, multipart, send } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

/** Previews through the owners' API, with the real gateway, Postgres, Redis and blob store (no worker: rows stay queued unless a test ends them). */
describe('previews: POST …/deploy?target=preview, GET/DELETE …/previews, expiry (real HTTP, Postgres, Redis)', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  let other: TestApplication;
  beforeAll(async () => {
    gw = await startGateway('previews', { PREVIEW_SWEEP_SECONDS: '1' });
    app = await gw.createApplication('shop');
    other = await gw.createApplication('other');
  });
  afterAll(async () => {
    await gw.close();
  });

  const deploy = (as: TestApplication, appId: string, query: string) => {
    const { body, contentType } = multipart(filesForm({ 'index.html': '<h1>preview</h1>' }));
    return send(`${gw.url}/dashboard/api/applications/${appId}/deploy${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as.key}`, 'content-type': contentType },
      body,
    });
  };
  const get = (as: TestApplication, path: string) => send(`${gw.url}${path}`, { headers: { authorization: `Bearer ${as.key}` } });
  const remove = (as: TestApplication, appId: string, name: string) =>
    send(`${gw.url}/dashboard/api/applications/${appId}/previews/${name}`, { method: 'DELETE', headers: { authorization: `Bearer ${as.key}` } });
  const finish = (taskId: string) => gw.sql.query(`UPDATE deployments SET status = 'succeeded', finished_at = now() WHERE id = $1`, [taskId]);

  it("deploys a preview as an application of its own under the parent, polled through the owners' API only; production untouched", async () => {
    const accepted = await deploy(app, app.id, '?target=preview&name=feat');
    expect(accepted.status).toBe(202);
    expect(accepted.json).toEqual({
      taskId: expect.any(String),
      status: 'queued',
      target: 'preview',
      preview: {
        name: 'feat',
        url: `http://${app.slug}--feat.localhost:8080`,
        expiresAt: expect.any(String),
        createdAt: expect.any(String),
        liveReleaseId: null,
      },
    });
    const hours = (Date.parse(accepted.json.preview.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(167);
    const { rows } = await gw.sql.query(
      `SELECT a.parent_id, a.slug, a.preview_name FROM deployments d JOIN applications a ON a.id = d.application_id WHERE d.id = $1`,
      [accepted.json.taskId],
    );
    expect(rows).toEqual([{ parent_id: app.id, slug: `${app.slug}--feat`, preview_name: 'feat' }]);
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM deployments WHERE application_id = $1`, [app.id])).rows[0].n).toBe(0);

    const polled = await get(app, `/dashboard/api/applications/${app.id}/deployments/${accepted.json.taskId}`);
    expect([polled.status, polled.json.status]).toEqual([200, 'queued']);
    // The contract's poll sees its own application's tasks only.
    expect((await get(app, `/api/v1/deployments/${accepted.json.taskId}`)).status).toBe(404);
    // A preview is not addressed by its own id, and is not listed as an application.
    const previewId = (await gw.sql.query(`SELECT id FROM applications WHERE parent_id = $1`, [app.id])).rows[0].id;
    expect((await get(app, `/dashboard/api/applications/${previewId}/releases`)).status).toBe(404);
    expect((await get(app, '/dashboard/api/applications')).json.applications.map((a: { id: string }) => a.id)).toEqual([app.id]);
    // One deploy at a time per preview, as per application.
    expect((await deploy(app, app.id, '?target=preview&name=feat')).json).toMatchObject({ code: 'deploy_in_progress', taskId: accepted.json.taskId });

    const list = await get(app, `/dashboard/api/applications/${app.id}/previews`);
    expect(list.json).toEqual({ previews: [expect.objectContaining({ name: 'feat' })], limit: 3, ttlHours: 168 });
    await finish(accepted.json.taskId);

    // Its release is listed with the application's, named by its preview, and is never promoted to production.
    const release = (
      await gw.sql.query(
        `INSERT INTO releases (application_id, deployment_id, kind, artifact_key, spec) VALUES ($1, $2, 'static', 'releases/p.tar.gz', '{}') RETURNING id`,
        [previewId, accepted.json.taskId],
      )
    ).rows[0].id;
    expect((await get(app, `/dashboard/api/applications/${app.id}/releases`)).json.releases).toEqual([
      expect.objectContaining({ id: release, preview: 'feat', live: false }),
    ]);
    const promote = await send(`${gw.url}/dashboard/api/applications/${app.id}/releases/${release}/live`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}` },
    });
    expect([promote.status, promote.json.code, promote.json.error]).toEqual([400, 'bad_request', expect.stringContaining("preview feat's")]);
    expect((await gw.sql.query(`SELECT live_release_id FROM applications WHERE id = $1`, [app.id])).rows[0].live_release_id).toBeNull();

    // Day-two reads of a preview: its own metrics; an unknown name (or another application's preview) is 404.
    expect((await get(app, `/dashboard/api/applications/${app.id}/metrics?preview=feat`)).status).toBe(200);
    expect((await get(app, `/dashboard/api/applications/${app.id}/metrics?preview=nope`)).json).toMatchObject({ code: 'not_found' });
    expect((await get(app, `/dashboard/api/applications/${app.id}/logs?preview=nope`)).json).toMatchObject({ code: 'not_found' });
    expect((await get(other, `/dashboard/api/applications/${other.id}/metrics?preview=feat`)).status).toBe(404);
  });

  it("answers 404 for every preview route to another application's key, and refuses bad targets and names with 400", async () => {
    expect((await deploy(other, app.id, '?target=preview&name=evil')).status).toBe(404);
    expect((await get(other, `/dashboard/api/applications/${app.id}/previews`)).status).toBe(404);
    expect((await remove(other, app.id, 'feat')).status).toBe(404);
    // A preview's task is visible under its parent only, not under another application's id.
    const task = (await gw.sql.query(`SELECT d.id FROM deployments d JOIN applications a ON a.id = d.application_id WHERE a.parent_id = $1`, [app.id])).rows[0]
      .id;
    expect((await get(other, `/dashboard/api/applications/${other.id}/deployments/${task}`)).status).toBe(404);
    expect((await get(other, `/dashboard/api/applications/${other.id}/deployments/${task}/log/stream`)).status).toBe(404);
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM applications WHERE preview_name = 'evil'`)).rows[0].n).toBe(0);
    for (const query of [
      '?target=staging',
      '?target=preview&name=Bad_Name',
      '?target=preview&name=a--b',
      `?target=preview&name=${'x'.repeat(33)}`,
      '?name=feat',
    ]) {
      const refused = await deploy(app, app.id, query);
      expect([query, refused.status, refused.json.code]).toEqual([query, 400, 'bad_request']);
    }
  });

  it('counts previews against the plan (free: 3, all applications counted): one more is 403 preview_limit_reached with nothing stored', async () => {
    const second = await deploy(app, app.id, '?target=preview&name=two');
    const third = await deploy(other, other.id, '?target=preview');
    expect([second.status, third.status, third.json.preview.name]).toEqual([202, 202, 'preview']);
    const before = (await gw.sql.query(`SELECT count(*)::int AS n FROM deployments`)).rows[0].n;
    const refused = await deploy(app, app.id, '?target=preview&name=four');
    expect([refused.status, refused.json.code, refused.json.error]).toEqual([403, 'preview_limit_reached', expect.stringContaining('allows 3 previews')]);
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM deployments`)).rows[0].n).toBe(before);
    // Production through the owners' API is not a preview.
    const production = await deploy(app, app.id, '?target=production');
    expect([production.status, production.json.target]).toEqual([202, 'production']);
    expect((await gw.sql.query(`SELECT application_id FROM deployments WHERE id = $1`, [production.json.taskId])).rows[0].application_id).toBe(app.id);
    for (const id of [second.json.taskId, third.json.taskId, production.json.taskId]) await finish(id);
  });

  it('deletes a preview (not while it deploys): its rows and stored source go, and the edges are told', async () => {
    const subscriber = new Redis(TEST_REDIS_URL);
    const heard: string[] = [];
    subscriber.on('message', (_channel, message) => heard.push(JSON.parse(message).applicationId));
    await subscriber.subscribe(routesChannel(gw.redisPrefix.replace(/:$/, '')).name);
    try {
      // Room under the plan's 3: the finished one goes first.
      expect((await remove(other, other.id, 'preview')).json).toEqual({ removed: 'preview' });
      const busy = await deploy(other, other.id, '?target=preview&name=busy');
      expect(busy.status).toBe(202);
      expect((await remove(other, other.id, 'busy')).json).toMatchObject({ code: 'deploy_in_progress' });
      const { rows } = await gw.sql.query(`SELECT d.source_key, a.id FROM deployments d JOIN applications a ON a.id = d.application_id WHERE d.id = $1`, [
        busy.json.taskId,
      ]);
      expect(await new LocalBlobStore(gw.blobDir).exists(rows[0].source_key)).toBe(true);
      await finish(busy.json.taskId);
      expect((await remove(other, other.id, 'busy')).json).toEqual({ removed: 'busy' });
      expect((await gw.sql.query(`SELECT count(*)::int AS n FROM applications WHERE id = $1`, [rows[0].id])).rows[0].n).toBe(0);
      expect(await new LocalBlobStore(gw.blobDir).exists(rows[0].source_key)).toBe(false);
      await waitFor(async () => (heard.includes(rows[0].id) ? true : undefined), { timeoutMs: 5000, what: 'the routes message for the removed preview' });
      expect((await remove(other, other.id, 'busy')).status).toBe(404);
    } finally {
      subscriber.disconnect();
    }
  });

  it('removes an expired preview within the sweep interval, and leaves the others', async () => {
    const expiring = (await gw.sql.query(`SELECT id FROM applications WHERE parent_id = $1 AND preview_name = 'two'`, [app.id])).rows[0].id;
    await gw.sql.query(`UPDATE applications SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring]);
    await waitFor(
      async () => ((await gw.sql.query(`SELECT count(*)::int AS n FROM applications WHERE id = $1`, [expiring])).rows[0].n === 0 ? true : undefined),
      { timeoutMs: 15_000, what: 'the expired preview to be removed' },
    );
    expect((await get(app, `/dashboard/api/applications/${app.id}/previews`)).json.previews.map((p: { name: string }) => p.name)).toEqual(['feat']);
  });
});
