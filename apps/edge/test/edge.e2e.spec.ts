import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { DeploymentsRepository, PlatformInfrastructure, asApplicationId, asReleaseId } from '@slipway/platform-data';
import { publishRoutesChanged } from '@slipway/messaging';
import { makeReleaseLive } from '@slipway/runtime';
import { DeployHarness, FIXTURES, freePort, sourceTar, waitFor } from '@slipway/testing';
import WebSocket from 'ws';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T>(): T;
}

/**
 * A raw HTTP/1.1 request to the edge with a chosen Host (fetch cannot set Host, and would
 * normalise `..` away, so traversal attempts reach the edge exactly as sent).
 */
function raw(
  port: number,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', agent: options.agent, headers: { host, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, body, json: <T>() => JSON.parse(body) as T });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** With EDGE_DATA_PLANE=nginx (CI runs this file with both planes), answers for live releases come from nginx itself, not the Node fallback. */
const NGINX = process.env['EDGE_DATA_PLANE'] === 'nginx';
const servedBy = (reply: Reply) => reply.headers['server'] ?? 'node edge';
const PLANE = NGINX ? 'nginx' : 'node edge';

describe('edge end to end (real edge, worker, Postgres, Redis)', () => {
  let h: DeployHarness;
  let port: number;
  let platform: PlatformInfrastructure;
  let deployments: DeploymentsRepository;
  const at = (slug: string) => `${slug}.localhost:${port}`;
  const get = (slug: string, path = '/', options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {}) =>
    raw(port, at(slug), path, options);

  beforeAll(async () => {
    h = await DeployHarness.create('edge-e2e');
    port = await freePort();
    await h.startEdge(port, { HEALTH_TIMEOUT_MS: '15000', DRAIN_GRACE_MS: '2000' });
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}` });
    platform = PlatformInfrastructure.open({ DATABASE_URL: h.db.url }, { poolSize: 2 });
    deployments = new DeploymentsRepository(platform);
  }, 60_000);
  afterAll(async () => {
    await platform.close();
    await h.close();
  });

  async function deploy(slug: string, fixture: string, extra: Record<string, string> = {}, appId?: string) {
    const applicationId = appId ?? (await h.createApplication({ slug }));
    const row = await h.waitForFinal(await h.deploy(applicationId, await sourceTar(join(FIXTURES, fixture), extra)));
    if (row.status === 'succeeded') {
      // Edges learn of the new release over pub/sub, milliseconds after the row is committed.
      const releaseId = (await h.pg.query('SELECT id FROM releases WHERE deployment_id = $1', [row.id])).rows[0].id as string;
      await waitFor(
        async () =>
          (await h.pg.query('SELECT live_release_id FROM applications WHERE id = $1', [applicationId])).rows[0].live_release_id === releaseId &&
          ![404, 503].includes((await get(slug, '/')).status),
        { timeoutMs: 10_000, what: `${slug} to be served` },
      );
    }
    return { applicationId, row };
  }

  describe('a static site', () => {
    let appId: string;
    beforeAll(async () => {
      const big = 'slipway '.repeat(600);
      const result = await deploy('site', 'static-site', {
        'notes.txt': big,
        '.env': 'SECRET=never-served',
        'assets/app.0a1b2c3d.js': 'console.log("fingerprinted")',
      });
      if (result.row.status !== 'succeeded') throw new Error(`static deploy failed: ${JSON.stringify(result.row.error)}`);
      appId = result.applicationId;
    });

    it('serves files by Host with content types, index.html for directories and cache headers', async () => {
      const home = await get('site', '/');
      expect(home.status).toBe(200);
      expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(home.headers['cache-control']).toBe('no-cache');
      expect(home.body).toContain('static fixture home');
      expect(servedBy(home)).toBe(PLANE);
      const about = await get('site', '/about');
      expect(about).toMatchObject({ status: 301, headers: { location: '/about/' } });
      expect((await get('site', '/about/')).body).toContain('static fixture about');
      const css = await get('site', '/assets/style.3f2a1b.css');
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect((await get('site', '/assets/app.0a1b2c3d.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect((await get('site', '/nope.html')).status).toBe(404);
    });

    it('answers byte ranges, conditional requests and compresses', async () => {
      const range = await get('site', '/notes.txt', { headers: { range: 'bytes=0-6' } });
      expect(range.status).toBe(206);
      expect(range.headers['content-range']).toBe(`bytes 0-6/${'slipway '.repeat(600).length}`);
      expect(range.body).toBe('slipway');
      expect((await get('site', '/notes.txt', { headers: { range: 'bytes=999999-' } })).status).toBe(416);
      const gz = await get('site', '/notes.txt', { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(Number(gz.headers['content-length'])).toBeLessThan(200);
      const etag = String((await get('site', '/notes.txt')).headers['etag']);
      expect((await get('site', '/notes.txt', { headers: { 'if-none-match': etag } })).status).toBe(304);
    });

    it('never leaves the release: traversal in every encoding, .env and .git', async () => {
      const passwd = await readFile('/etc/passwd', 'utf8');
      const attempts = [
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
        '/..%2f..%2f..%2f..%2fetc%2fpasswd',
        '/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
        '/about/..%2f..%2f..%2f..%2fetc/passwd',
        '/%252e%252e/%252e%252e/etc/passwd',
        '/..%5c..%5c..%5cetc%5cpasswd',
        '/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd',
        '/index.html%00.txt',
        '/.env',
        '/%2eenv',
        '/.git/config',
        '/about/../.env',
      ];
      for (const path of attempts) {
        const response = await get('site', path);
        expect([400, 404]).toContain(response.status);
        expect(response.body).not.toContain(passwd.slice(0, 20));
        expect(response.body).not.toContain('never-served');
      }
    });

    it('serves a custom domain once it is verified (never a pending claim, in any spelling), and a plain 404 for unknown hosts', async () => {
      // A claim whose TXT record was never found, and a verified one (the gateway's verify sets verified_at).
      await h.pg.query(`INSERT INTO domains (application_id, hostname, verification_token) VALUES ($1, 'shop.pending-e2e.test', 'x')`, [appId]);
      await h.pg.query(`INSERT INTO domains (application_id, hostname, verification_token, verified_at) VALUES ($1, 'www.site-e2e.test', 'y', now())`, [appId]);
      await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
      await waitFor(async () => (await raw(port, 'www.site-e2e.test', '/')).status === 200, { what: 'the custom domain' });
      for (const host of [
        'shop.pending-e2e.test',
        'SHOP.Pending-E2E.test',
        'shop.pending-e2e.test.',
        'shop.pending-e2e.test:8080',
        'shop.pending-e2e.test.:443',
      ]) {
        const pending = await raw(port, host, '/');
        expect([host, pending.status, pending.body]).toEqual([host, 404, expect.stringContaining('There is no application at this address.')]);
      }
      // Losing verification (re-check found no record) takes the route away again.
      await h.pg.query(`UPDATE domains SET verified_at = NULL WHERE hostname = 'www.site-e2e.test'`);
      await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
      await waitFor(async () => (await raw(port, 'www.site-e2e.test', '/')).status === 404, { what: 'the route to go' });
      await h.pg.query(`UPDATE domains SET verified_at = now() WHERE hostname = 'www.site-e2e.test'`);
      await publishRoutesChanged(h.redis, h.prefix, { applicationId: appId });
      await waitFor(async () => (await raw(port, 'www.site-e2e.test', '/')).status === 200, { what: 'the custom domain again' });
      expect((await raw(port, 'www.site-e2e.test:8443', '/')).body).toContain('static fixture home');
      const unknown = await raw(port, at('nobody-here'), '/');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toContain('There is no application at this address.');
    });
  });

  it('falls back to index.html for a single-page app, but not for missing assets', async () => {
    const { row } = await deploy('spa', 'vite-spa');
    expect(row.status).toBe('succeeded');
    const deep = await get('spa', '/dashboard/settings', { headers: { accept: 'text/html' } });
    expect(deep.status).toBe(200);
    expect(deep.body).toContain('<div id="app">');
    expect((await get('spa', '/assets/missing.js')).status).toBe(404);
  });

  describe('a Node server', () => {
    let appId: string;
    beforeAll(async () => {
      appId = await h.createApplication({ slug: 'echo', secrets: { ECHO_SECRET: 'node-secret-canary' } });
      const { row } = await deploy('echo', 'node-echo', {}, appId);
      if (row.status !== 'succeeded') throw new Error(`node deploy failed: ${JSON.stringify(row.error)}`);
    });

    it('proxies method, path, headers and body, and adds X-Forwarded-*', async () => {
      const response = await get('echo', '/submit?x=1', { method: 'PUT', body: 'hello body', headers: { 'x-custom': 'kept', 'content-type': 'text/plain' } });
      expect(response.status).toBe(200);
      expect(servedBy(response)).toBe(PLANE);
      expect(response.headers['x-echo']).toBe('yes');
      const echo = response.json<{ method: string; url: string; body: string; headers: Record<string, string>; secret: string }>();
      expect(echo).toMatchObject({ method: 'PUT', url: '/submit?x=1', body: 'hello body', secret: 'set' });
      expect(echo.headers).toMatchObject({
        'x-custom': 'kept',
        'x-forwarded-for': '127.0.0.1',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': at('echo'),
        host: at('echo'),
      });
    });

    it('streams responses as they are produced', async () => {
      const arrivals: { at: number; text: string }[] = [];
      await new Promise<void>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/stream', headers: { host: at('echo') } }, (res) => {
          res.on('data', (c: Buffer) => arrivals.push({ at: Date.now(), text: c.toString('utf8') }));
          res.on('end', resolve);
        })
          .on('error', reject)
          .end();
      });
      expect(arrivals.map((a) => a.text).join('')).toBe('chunk 0\nchunk 1\nchunk 2\n');
      // Each chunk was delivered as the app wrote it (300 ms apart), not buffered to the end.
      expect(arrivals.length).toBeGreaterThanOrEqual(3);
      expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThan(400);
    });

    it('proxies websockets', async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/socket`, { headers: { host: at('echo') } });
      const reply = await new Promise<string>((resolve, reject) => {
        ws.on('open', () => ws.send('ping'));
        ws.on('message', (data: Buffer) => resolve(data.toString()));
        ws.on('error', reject);
      });
      ws.terminate();
      expect(reply).toBe('echo:ping');
    });

    it("hands a release artifact (kubernetes pods) only to the holder of that release's artifact token", async () => {
      const { releaseArtifactToken, edgeInternalToken } = await import('@slipway/messaging');
      const { id: releaseId, artifact_key: key } = (
        await h.pg.query('SELECT r.id, r.artifact_key FROM releases r JOIN applications a ON a.live_release_id = r.id WHERE a.id = $1', [appId])
      ).rows[0] as { id: string; artifact_key: string };
      const url = `http://127.0.0.1:${port}/_slipway/artifacts/${releaseId}`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${releaseArtifactToken(h.masterKey, releaseId)}` } });
      expect(ok.status).toBe(200);
      const chunks: Buffer[] = [];
      for await (const c of await h.blobs.get(key)) chunks.push(c as Buffer);
      expect(Buffer.from(await ok.arrayBuffer()).equals(Buffer.concat(chunks))).toBe(true);
      const otherId = '00000000-0000-4000-8000-000000000000';
      for (const authorization of [`Bearer ${edgeInternalToken(h.masterKey)}`, `Bearer ${releaseArtifactToken(h.masterKey, otherId)}`, '']) {
        expect((await fetch(url, { headers: { authorization } })).status).toBe(401);
      }
      const missing = await fetch(`http://127.0.0.1:${port}/_slipway/artifacts/${otherId}`, {
        headers: { authorization: `Bearer ${releaseArtifactToken(h.masterKey, otherId)}` },
      });
      expect(missing.status).toBe(404);
    });

    it('restarts a crashed process with backoff and keeps its logs', async () => {
      const before = (await get('echo', '/')).json<{ instance: string }>().instance;
      await get('echo', '/crash');
      const after = await waitFor(
        async () => {
          const response = await get('echo', '/');
          const instance = response.status === 200 ? response.json<{ instance: string }>().instance : undefined;
          return instance !== before ? instance : undefined;
        },
        { timeoutMs: 15_000, what: 'the restarted process' },
      );
      expect(after).toEqual(expect.any(String));
      const live = (await h.pg.query('SELECT live_release_id FROM applications WHERE id = $1', [appId])).rows[0].live_release_id;
      const { edgeInternalToken } = await import('@slipway/messaging');
      const logs = await fetch(`http://127.0.0.1:${port}/_slipway/releases/${live}/logs`, {
        headers: { authorization: `Bearer ${edgeInternalToken(h.masterKey)}` },
      });
      expect(logs.status).toBe(200);
      expect(await logs.text()).toMatch(/process exited \(1\)[\s\S]*restarting in \d+ ms/);
    });

    it('swaps to a new version with zero failed requests while a load loop runs', async () => {
      const v2 = (await readFile(join(FIXTURES, 'node-echo', 'server.js'), 'utf8')).replace("'echo-v1'", "'echo-v2'");
      let stop = false;
      const keepAlive = new Agent({ keepAlive: true, maxSockets: 8 });
      const outcomes = { ok: 0, failed: [] as string[], versions: new Set<string>() };
      const loop = async () => {
        while (!stop) {
          try {
            const response = await get('echo', '/', { agent: keepAlive });
            if (response.status === 200 && servedBy(response) !== PLANE) outcomes.failed.push(`served by ${servedBy(response)}`);
            else if (response.status === 200) {
              outcomes.ok += 1;
              outcomes.versions.add(response.json<{ version: string }>().version);
            } else outcomes.failed.push(`${response.status} ${response.body}`);
          } catch (error) {
            outcomes.failed.push((error as Error).message);
          }
        }
      };
      const loops = Array.from({ length: 8 }, loop);
      const { row } = await deploy('echo', 'node-echo', { 'server.js': v2 }, appId);
      await waitFor(async () => (await get('echo', '/')).json<{ version: string }>().version === 'echo-v2', { what: 'v2 to serve' });
      await new Promise((r) => setTimeout(r, 2500)); // across the drain of v1
      stop = true;
      await Promise.all(loops);
      keepAlive.destroy();
      expect(row.status).toBe('succeeded');
      expect(outcomes.failed).toEqual([]);
      expect(outcomes.ok).toBeGreaterThan(50);
      expect([...outcomes.versions].sort()).toEqual(['echo-v1', 'echo-v2']);
    }, 90_000);

    it('a version that never becomes healthy fails the deploy and the old one keeps answering', async () => {
      const broken = "setInterval(() => {}, 1000); console.log('listening on nothing at all');";
      const { row } = await deploy('echo', 'node-echo', { 'server.js': broken }, appId);
      expect(row).toMatchObject({ status: 'failed', error: { code: 'release_unhealthy', step: 'release' } });
      expect(row.steps.find((s) => s.name === 'release')!.log).toContain('listening on nothing at all');
      const still = await get('echo', '/');
      expect(still.status).toBe(200);
      expect(still.json<{ version: string }>().version).toBe('echo-v2');
    }, 60_000);

    it('rolls back to an earlier release instantly, without a rebuild', async () => {
      const releases = (await h.pg.query('SELECT id FROM releases WHERE application_id = $1 ORDER BY created_at', [appId])).rows as { id: string }[];
      await makeReleaseLive(deployments, h.redis, h.prefix, asApplicationId(appId), asReleaseId(releases[0]!.id));
      await waitFor(async () => (await get('echo', '/')).json<{ version: string }>().version === 'echo-v1', { timeoutMs: 15_000, what: 'v1 again' });
      expect((await h.pg.query('SELECT count(*)::int AS n FROM deployments WHERE application_id = $1', [appId])).rows[0].n).toBe(3);
    }, 30_000);
  });
});
