import { randomBytes, randomUUID } from 'node:crypto';
import { issueToken } from '@slipway/crypto';
import { send, type HttpResult } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

/**
 * An application's database backups and restores through the owners' API, with the real gateway
 * and Postgres. No backup service runs: base backups are catalogue rows the test writes, and
 * restores stay queued unless the test ends them.
 */
describe('database backups: GET/POST …/database/backups, POST …/database/restores, GET …/restores/:id (real HTTP, Postgres)', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  /** An application of another owner, with a database of its own. */
  let stranger: TestApplication;
  let baseAt: Date;
  let baseId: string;

  const call = (as: TestApplication, method: string, path: string, body?: unknown): Promise<HttpResult> =>
    send(`${gw.url}/dashboard/api/applications/${path}`, {
      method,
      headers: { authorization: `Bearer ${as.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });
  const restore = (to: string, into: string | undefined = 'in_place', as = app, appId = app.id) =>
    call(as, 'POST', `${appId}/database/restores`, { to, ...(into === undefined ? {} : { into }) });
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  const restoreRows = async (appId: string) =>
    (await gw.sql.query(`SELECT id, status, mode, target_time FROM database_restores WHERE application_id = $1 ORDER BY created_at`, [appId])).rows;

  async function giveDatabase(appId: string) {
    const name = `app_${randomBytes(5).toString('hex')}`;
    await gw.sql.query(
      `INSERT INTO application_databases (application_id, owner_id, database_name, role_name, password) SELECT id, owner_id, $2, $3, '\\x00'::bytea FROM applications WHERE id = $1`,
      [appId, name, `${name}_role`],
    );
  }

  /** Another owner, their application and its project API key (startGateway's helper makes every application under one owner). */
  async function strangersApplication(): Promise<TestApplication> {
    const owner = (await gw.sql.query(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`stranger-${Date.now()}@example.com`])).rows[0].id;
    const slug = `stranger-${randomBytes(3).toString('hex')}`;
    const id = (await gw.sql.query(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, 'stranger', $2) RETURNING id`, [owner, slug])).rows[0].id;
    const token = issueToken('api_key');
    const keyId = (
      await gw.sql.query(`INSERT INTO api_keys (application_id, name, prefix, key_hash) VALUES ($1, 'test', $2, $3) RETURNING id`, [
        id,
        token.prefix,
        token.hash,
      ])
    ).rows[0].id;
    return { id, slug, key: token.token, keyId };
  }

  beforeAll(async () => {
    gw = await startGateway('dbbackups');
    app = await gw.createApplication('shop');
    stranger = await strangersApplication();
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 404 not_found on every route while the application has no database, and writes nothing', async () => {
    const answers = [
      await call(app, 'GET', `${app.id}/database/backups`),
      await call(app, 'POST', `${app.id}/database/backups`, { label: 'x' }),
      await restore(minutesAgo(1)),
      await call(app, 'GET', `${app.id}/database/restores/${randomUUID()}`),
    ];
    for (const res of answers) expect([res.status, res.json.code]).toEqual([404, 'not_found']);
    expect(answers[0]!.json.error).toContain('no database');
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM backups`)).rows[0].n).toBe(0);
    expect(await restoreRows(app.id)).toEqual([]);
  });

  it("lists the restore window from the oldest base backup, the base, and the platform's backup health", async () => {
    await giveDatabase(app.id);
    await giveDatabase(stranger.id);
    const base = await gw.sql.query(
      `INSERT INTO backups (kind, status, trigger, blob_key, size_bytes, wal_start, started_at, finished_at)
       VALUES ('base', 'succeeded', 'schedule', 'backups/base/one.tar', 123456, '000000010000000000000003', now() - interval '61 minutes', now() - interval '60 minutes') RETURNING id, finished_at`,
    );
    [baseId, baseAt] = [base.rows[0].id, base.rows[0].finished_at];
    // A later failed base: not something to restore from, but the health says so.
    await gw.sql.query(
      `INSERT INTO backups (kind, status, trigger, started_at, finished_at, error) VALUES ('base', 'failed', 'schedule', now() - interval '5 minutes', now() - interval '4 minutes', 'disk full')`,
    );

    const before = Date.now();
    const list = await call(app, 'GET', `${app.id}/database/backups`);
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      pointInTime: { earliest: baseAt.toISOString(), latest: expect.any(String) },
      windowDays: 1,
      backups: [{ id: baseId, kind: 'base', label: null, at: baseAt.toISOString(), sizeBytes: 123456, trigger: 'schedule' }],
      restores: [],
      health: { lastBackupAt: baseAt.toISOString(), failedAt: expect.any(String) },
    });
    expect(Math.abs(Date.parse(list.json.pointInTime.latest) - before)).toBeLessThan(10_000);
    expect(list.text).not.toContain('disk full');
  });

  it('marks a restore point (201), listed with its label for its application only', async () => {
    const marked = await call(app, 'POST', `${app.id}/database/backups`, { label: 'before the migration' });
    expect(marked.status).toBe(201);
    expect(marked.json).toEqual({
      id: expect.any(String),
      kind: 'restore_point',
      label: 'before the migration',
      at: expect.any(String),
      sizeBytes: null,
      trigger: 'owner',
    });
    expect(Math.abs(Date.parse(marked.json.at) - Date.now())).toBeLessThan(10_000);
    const { rows } = await gw.sql.query(`SELECT kind, status, application_id, label FROM backups WHERE id = $1`, [marked.json.id]);
    expect(rows).toEqual([{ kind: 'restore_point', status: 'succeeded', application_id: app.id, label: 'before the migration' }]);

    const listed = (await call(app, 'GET', `${app.id}/database/backups`)).json.backups;
    expect(listed.map((b: { id: string }) => b.id)).toEqual([marked.json.id, baseId]);
    expect((await call(stranger, 'GET', `${stranger.id}/database/backups`)).json.backups.map((b: { id: string }) => b.id)).toEqual([baseId]);

    const unlabelled = await call(app, 'POST', `${app.id}/database/backups`, {});
    expect([unlabelled.status, unlabelled.json.label]).toEqual([201, 'restore point']);
    for (const body of [{ label: 42 }, { label: ' ' }, { label: 'x', extra: true }]) {
      const refused = await call(app, 'POST', `${app.id}/database/backups`, body);
      expect([JSON.stringify(body), refused.status, refused.json.code]).toEqual([JSON.stringify(body), 400, 'bad_request']);
    }
    const notJson = await send(`${gw.url}/dashboard/api/applications/${app.id}/database/backups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': 'text/plain' },
      body: Buffer.from('label=x'),
    });
    expect([notJson.status, notJson.json.code]).toEqual([400, 'bad_request']);
  });

  let firstRestore: string;

  it('queues a restore in place to a time in the window (202), one at a time (409 restore_in_progress)', async () => {
    const to = minutesAgo(30);
    const queued = await restore(to);
    expect(queued.status).toBe(202);
    expect(queued.json).toEqual({
      id: expect.any(String),
      status: 'queued',
      step: 'queued',
      to,
      into: 'in_place',
      databaseName: null,
      keptDatabase: null,
      sizeBytes: null,
      error: null,
      createdAt: expect.any(String),
      finishedAt: null,
    });
    firstRestore = queued.json.id;
    expect(await restoreRows(app.id)).toEqual([{ id: firstRestore, status: 'queued', mode: 'in_place', target_time: new Date(to) }]);

    const second = await restore(minutesAgo(20), 'new');
    expect([second.status, second.json.code, second.json.restoreId]).toEqual([409, 'restore_in_progress', firstRestore]);
    expect(await restoreRows(app.id)).toHaveLength(1);
    // Another application's restore is not held up by this one.
    const theirs = await restore(minutesAgo(10), 'new', stranger, stranger.id);
    expect(theirs.status).toBe(202);
  });

  it('refuses a time outside the window with 422 restore_point_unavailable (earliest, latest), and a malformed body with 400', async () => {
    const future = await restore(new Date(Date.now() + 3_600_000).toISOString());
    expect([future.status, future.json.code, future.json.error]).toEqual([422, 'restore_point_unavailable', expect.stringContaining('in the future')]);
    expect(future.json).toMatchObject({ earliest: baseAt.toISOString(), latest: expect.any(String) });
    const tooEarly = await restore(minutesAgo(120));
    expect([tooEarly.status, tooEarly.json.code, tooEarly.json.earliest]).toEqual([422, 'restore_point_unavailable', baseAt.toISOString()]);
    expect(Math.abs(Date.parse(tooEarly.json.latest) - Date.now())).toBeLessThan(10_000);

    const strangersPoint = (await call(stranger, 'POST', `${stranger.id}/database/backups`, { label: 'theirs' })).json.id;
    const refusals: [unknown, string][] = [
      [{ to: 'yesterday', into: 'in_place' }, 'garbage time'],
      [{ to: minutesAgo(30).slice(0, 19), into: 'in_place' }, 'a time without its zone (never read as the server local time)'],
      [{ to: randomUUID(), into: 'in_place' }, 'a backup id that is not one'],
      [{ to: strangersPoint, into: 'in_place' }, "another application's restore point"],
      [{ to: minutesAgo(30) }, 'into missing'],
      [{ to: minutesAgo(30), into: 'sideways' }, 'into unknown'],
      [{ into: 'new' }, 'to missing'],
      [{ to: minutesAgo(30), into: 'new', force: true }, 'an unknown field'],
    ];
    for (const [body, what] of refusals) {
      const refused = await call(app, 'POST', `${app.id}/database/restores`, body);
      expect([what, refused.status, refused.json.code]).toEqual([what, 400, 'bad_request']);
    }
    expect(await restoreRows(app.id)).toHaveLength(1);
  });

  it('restores to a restore point by its id (its time), once the previous restore has finished', async () => {
    const point = (await call(app, 'POST', `${app.id}/database/backups`, { label: 'known good' })).json;
    await gw.sql.query(`UPDATE database_restores SET status = 'succeeded', step = 'done', finished_at = now() WHERE id = $1`, [firstRestore]);
    const accepted = await restore(point.id, 'new');
    expect([accepted.status, accepted.json.to, accepted.json.into, accepted.json.status]).toEqual([202, point.at, 'new', 'queued']);
    const rows = await restoreRows(app.id);
    expect(rows.map((row) => [row.id, row.status, row.mode, row.target_time.toISOString()])).toEqual([
      [firstRestore, 'succeeded', 'in_place', expect.any(String)],
      [accepted.json.id, 'queued', 'new', point.at],
    ]);
    expect((await call(app, 'GET', `${app.id}/database/backups`)).json.restores.map((r: { id: string }) => r.id)).toEqual([accepted.json.id, firstRestore]);
  });

  it("answers a restore's status by its id, and 404 for another application's restore or another owner's application", async () => {
    const status = await call(app, 'GET', `${app.id}/database/restores/${firstRestore}`);
    expect([status.status, status.json.id, status.json.status, status.json.into, status.json.finishedAt]).toEqual([
      200,
      firstRestore,
      'succeeded',
      'in_place',
      expect.any(String),
    ]);

    const theirs = (await restoreRows(stranger.id))[0].id;
    for (const id of [theirs, randomUUID(), 'not-an-id']) {
      const missing = await call(app, 'GET', `${app.id}/database/restores/${id}`);
      expect([id, missing.status, missing.json.code]).toEqual([id, 404, 'not_found']);
    }
    // Another owner's key on this application's routes: the application does not exist for them.
    const answers = [
      await call(stranger, 'GET', `${app.id}/database/backups`),
      await call(stranger, 'POST', `${app.id}/database/backups`, { label: 'evil' }),
      await restore(minutesAgo(5), 'in_place', stranger, app.id),
      await call(stranger, 'GET', `${app.id}/database/restores/${firstRestore}`),
    ];
    for (const res of answers) expect([res.status, res.json.code]).toEqual([404, 'not_found']);
    expect(answers[0]!.text).not.toContain(baseId);
    expect((await gw.sql.query(`SELECT count(*)::int AS n FROM backups WHERE label = 'evil'`)).rows[0].n).toBe(0);
    expect(await restoreRows(app.id)).toHaveLength(2);
  });

  it('limits restores to restoresPerHour per application (429 rate_limited with Retry-After); other applications are not counted', async () => {
    // This application has asked for 2 restores in this file; finish them and add past ones up to the limit.
    await gw.sql.query(`UPDATE database_restores SET status = 'succeeded', finished_at = now() WHERE application_id = $1 AND status IN ('queued', 'running')`, [
      app.id,
    ]);
    const asked = (await restoreRows(app.id)).length;
    for (let i = asked; i < 4; i++) {
      await gw.sql.query(
        `INSERT INTO database_restores (application_id, target_time, mode, status, finished_at) VALUES ($1, now() - interval '30 minutes', 'new', 'succeeded', now())`,
        [app.id],
      );
    }
    const refused = await restore(minutesAgo(30), 'new');
    expect([refused.status, refused.json.code]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json.retryAfterSeconds).toBeLessThanOrEqual(3600);
    expect(await restoreRows(app.id)).toHaveLength(4);
    // An hour later (the rows made older), it is accepted again.
    await gw.sql.query(`UPDATE database_restores SET created_at = created_at - interval '61 minutes' WHERE application_id = $1`, [app.id]);
    const accepted = await restore(minutesAgo(30), 'new');
    expect(accepted.status).toBe(202);
  });
});
