import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { send } from './support/http.js';
import { startGateway, type GatewayUnderTest } from './support/platform.js';

describe('the built dashboard at / (real HTTP)', () => {
  let dir: string;
  let gw: GatewayUnderTest;
  let bare: GatewayUnderTest;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-dashboard-dist-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
    await writeFile(join(dir, 'assets', 'index-Ab12.js'), 'console.log(1)');
    gw = await startGateway('dashboard-site', { DASHBOARD_DIR: dir });
    bare = await startGateway('dashboard-site-missing', { DASHBOARD_DIR: join(dir, 'nope') });
  });
  afterAll(async () => {
    await gw.close();
    await bare.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves index.html uncached at / and for client routes (SPA fallback)', async () => {
    for (const path of ['/', '/apps/123/deployments', '/sign-in']) {
      const res = await send(`${gw.url}${path}`);
      expect([path, res.status, res.headers['content-type'], res.headers['cache-control'], res.text]).toEqual([
        path,
        200,
        'text/html; charset=utf-8',
        'no-cache',
        '<!doctype html><div id="root"></div>',
      ]);
    }
  });

  it('serves hashed assets with a long immutable cache; a missing asset is a 404, not index.html', async () => {
    const asset = await send(`${gw.url}/assets/index-Ab12.js`);
    expect([asset.status, asset.headers['content-type'], asset.headers['cache-control'], asset.text]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'public, max-age=31536000, immutable',
      'console.log(1)',
    ]);
    expect((await send(`${gw.url}/assets/gone-1234.js`)).status).toBe(404);
    expect((await send(`${gw.url}/%2e%2e/%2e%2e/package.json`)).text).not.toContain('"name"');
  });

  it('leaves the APIs alone', async () => {
    expect((await send(`${gw.url}/api/v1`)).headers['content-type']).toMatch(/json/);
    expect((await send(`${gw.url}/dashboard/api/session`)).json).toMatchObject({ code: 'unauthorized' });
    expect((await send(`${gw.url}/health/live`)).status).toBe(200);
  });

  it('says how to build the dashboard when DASHBOARD_DIR has no build', async () => {
    const res = await send(`${bare.url}/`);
    expect([res.status, res.text]).toEqual([200, expect.stringContaining('pnpm nx build dashboard')]);
  });
});
