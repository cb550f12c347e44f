import { readdir } from 'node:fs/promises';
import { LocalBlobStore } from '@slipway/blob';
import { filesForm, multipart, send } from './support/http.js';
import { startGateway, type GatewayUnderTest, type TestApplication } from './support/platform.js';

describe('POST /api/v1/deploy while Redis does not answer', () => {
  let gw: GatewayUnderTest;
  let app: TestApplication;
  beforeAll(async () => {
    gw = await startGateway('redisdown', { REDIS_URL: 'redis://127.0.0.1:1' });
    app = await gw.createApplication();
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 503 unavailable at once (no hanging), accepting and storing nothing', async () => {
    const { body, contentType } = multipart(filesForm({ 'index.html': 'hi' }));
    const response = await send(`${gw.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType },
      body,
    });
    expect(response.status).toBe(503);
    expect(response.json).toEqual({
      error: expect.stringMatching(/Redis/),
      code: 'unavailable',
      documentation: 'http://localhost:3000/api/v1#error-unavailable',
    });
    expect(response.headers['retry-after']).toBe('5');
    expect((await gw.sql.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [app.id])).rows[0].n).toBe(0);
    expect(await new LocalBlobStore(gw.blobDir).list('')).toEqual([]);
    expect(await readdir(gw.uploadDir)).toEqual([]);
  });

  it('answers 503 even when the application also has a deploy in flight (the two checks run side by side; Redis decides)', async () => {
    const busy = await gw.createApplication();
    await gw.sql.query(`INSERT INTO deployments (application_id, status) VALUES ($1, 'building')`, [busy.id]);
    const { body, contentType } = multipart(filesForm({ 'index.html': 'hi' }));
    const response = await send(`${gw.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${busy.key}`, 'content-type': contentType },
      body,
    });
    expect(response.status).toBe(503);
    expect(response.json.code).toBe('unavailable');
  });

  it('still serves what does not need Redis', async () => {
    expect((await send(`${gw.url}/api/v1/secrets`, { headers: { authorization: `Bearer ${app.key}` } })).status).toBe(200);
  });
});
