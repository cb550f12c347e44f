import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { buffer } from 'node:stream/consumers';
import { edgeInternalToken } from '@slipway/messaging';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, sourceTar } from '@slipway/testing';

/** Tar entry names in a gzipped tar (enough for asserting what a release holds). */
function tarNames(gz: Buffer): string[] {
  const tar = gunzipSync(gz);
  const names: string[] = [];
  for (let offset = 0; offset + 512 <= tar.length;) {
    const header = tar.subarray(offset, offset + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (!name) break;
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').trim() || '0', 8);
    names.push(prefix ? `${prefix}/${name}` : name);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

describe('build worker end to end (real Postgres, Redis, worker process, npm registry)', () => {
  let h: DeployHarness;
  let edge: Server;
  const edgeCalls: { url: string; authorization: string | undefined }[] = [];
  let edgeAnswer: { status: number; body: unknown } = { status: 200, body: { status: 'healthy' } };

  beforeAll(async () => {
    h = await DeployHarness.create('worker-e2e');
    // Stands in for the edge's internal hand-off endpoint only (the edge has its own tests):
    // records the call the worker makes and answers as told.
    const edgePort = await freePort();
    edge = createServer((req, res) => {
      edgeCalls.push({ url: req.url!, authorization: req.headers.authorization });
      res.writeHead(edgeAnswer.status, { 'content-type': 'application/json' }).end(JSON.stringify(edgeAnswer.body));
    });
    await new Promise<void>((resolve) => edge.listen(edgePort, '127.0.0.1', resolve));
    await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}` });
  }, 60_000);

  afterAll(async () => {
    await h.close();
    edge.close();
  });

  it('deploys a plain static site: every step recorded, release artifact stored and live', async () => {
    const appId = await h.createApplication();
    const id = await h.deployFixture(appId, 'static-site');
    const row = await h.waitForFinal(id);
    expect(row.status).toBe('succeeded');
    expect(row.error).toBeNull();
    expect(row.spec).toMatchObject({ kind: 'static', outputDir: '.', files: { count: 3 } });
    expect(row.steps.map((s) => [s.name, s.status])).toEqual([
      ['receive', 'succeeded'],
      ['analyze', 'succeeded'],
      ['install', 'skipped'],
      ['build', 'skipped'],
      ['scan', 'succeeded'],
      ['package', 'succeeded'],
      ['release', 'succeeded'],
    ]);
    for (const step of row.steps) expect(step).toMatchObject({ startedAt: expect.any(String), finishedAt: expect.any(String), durationMs: expect.any(Number) });
    const release = (
      await h.pg.query(
        `SELECT r.id, r.kind, r.artifact_key, a.live_release_id FROM releases r JOIN applications a ON a.id = r.application_id WHERE r.deployment_id = $1`,
        [id],
      )
    ).rows[0];
    expect(release).toMatchObject({ kind: 'static', artifact_key: `releases/${release.id}.tar.gz`, live_release_id: release.id });
    const artifact = Buffer.from(await (await h.blobs.get(release.artifact_key)).toArray().then((c) => Buffer.concat(c as Buffer[])));
    expect(tarNames(artifact).sort()).toEqual(['about/index.html', 'assets/style.3f2a1b.css', 'index.html']);
    expect(row.hazards).toEqual([]);
  });

  it('deploys a Vite-style SPA: npm ci from the registry in the sandbox, build-time variables, redacted logs', async () => {
    const appId = await h.createApplication({ secrets: { VITE_GREETING: 'bonjour-canary-greeting', STRIPE_SECRET: 'server-only-canary-value' } });
    const id = await h.deployFixture(appId, 'vite-spa');
    const row = await h.waitForFinal(id);
    expect(row.error).toBeNull();
    expect(row.status).toBe('succeeded');
    expect(row.spec).toMatchObject({
      kind: 'spa',
      packageManager: 'npm',
      commands: { install: 'npm ci', build: 'npm run build' },
      outputDir: 'dist',
      spaFallback: true,
    });
    expect(row.steps.find((s) => s.name === 'install')).toMatchObject({ status: 'succeeded', log: expect.stringContaining('$ npm ci') });
    expect(row.steps.find((s) => s.name === 'build')!.log).toMatch(/built dist\/assets\/main-[0-9a-f]{8}\.js/);
    expect(row.hazards.map((x) => x.code)).toEqual([]);
    const release = (await h.pg.query(`SELECT artifact_key FROM releases WHERE deployment_id = $1`, [id])).rows[0];
    const names = tarNames(Buffer.concat((await (await h.blobs.get(release.artifact_key)).toArray()) as Buffer[]));
    expect(names).toContain('index.html');
    expect(names.some((n) => /^assets\/main-[0-9a-f]{8}\.js$/.test(n))).toBe(true);
    expect(names.some((n) => n.startsWith('node_modules'))).toBe(false);
    // The public variable reached the bundle: its value was inlined, so the bundle changed.
    const gz = Buffer.concat((await (await h.blobs.get(release.artifact_key)).toArray()) as Buffer[]);
    expect(gunzipSync(gz).includes(Buffer.from('bonjour-canary-greeting'))).toBe(true);
    expect(gunzipSync(gz).includes(Buffer.from('server-only-canary-value'))).toBe(false);
  });

  it('restores dependencies from the cache when the lockfile did not change', async () => {
    const appId = await h.createApplication();
    const first = await h.waitForFinal(await h.deployFixture(appId, 'vite-spa'));
    expect(first.steps.find((s) => s.name === 'install')!.log).toContain('$ npm ci');
    const second = await h.waitForFinal(await h.deployFixture(appId, 'vite-spa'));
    expect(second.status).toBe('succeeded');
    const install = second.steps.find((s) => s.name === 'install')!;
    expect(install.log).toContain('restored from the cache');
    expect(install.log).not.toContain('$ npm ci');
    // Another application does not share the cache.
    const other = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'vite-spa'));
    expect(other.steps.find((s) => s.name === 'install')!.log).toContain('$ npm ci');
  });

  it('flags secrets that reach served files, and never shows a secret value in logs', async () => {
    const appId = await h.createApplication({ secrets: { ORDER_TOKEN: 'server-only-canary-token-123', VITE_API_SECRET_KEY: 'sk_test_canaryCanaryCanary123' } });
    const id = await h.deployFixture(appId, 'static-site', { 'config.js': "window.token = 'server-only-canary-token-123';" });
    const row = await h.waitForFinal(id);
    expect(row.status).toBe('succeeded');
    expect(row.hazards).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'secret_in_output', severity: 'critical', detail: 'ORDER_TOKEN', path: 'config.js' }),
        expect.objectContaining({ code: 'client_exposed_secret', detail: 'VITE_API_SECRET_KEY' }),
      ]),
    );
    expect(JSON.stringify(row)).not.toContain('server-only-canary-token-123');
  });

  it('redacts secret values from step logs', async () => {
    const appId = await h.createApplication({ secrets: { VITE_GREETING: 'printed-canary-greeting' } });
    const id = await h.deploy(
      appId,
      await sourceTar(join(FIXTURES, 'broken-build'), {
        'package.json': JSON.stringify({ scripts: { build: 'node -e "console.log(process.env.VITE_GREETING); process.exit(1)"' } }),
      }),
    );
    const row = await h.waitForFinal(id);
    expect(row).toMatchObject({ status: 'failed', error: { code: 'build_failed' } });
    const build = row.steps.find((s) => s.name === 'build')!;
    expect(build.log).toContain('[redacted:VITE_GREETING]');
    expect(JSON.stringify(row)).not.toContain('printed-canary-greeting');
  });

  it('deploys a Node server reading PORT and hands it to the edge before it goes live', async () => {
    const appId = await h.createApplication();
    edgeCalls.length = 0;
    const id = await h.deployFixture(appId, 'node-server');
    const row = await h.waitForFinal(id);
    expect(row.status).toBe('succeeded');
    expect(row.spec).toMatchObject({ kind: 'node', commands: { install: 'npm ci', start: 'npm run start' }, port: { source: 'env' } });
    expect(row.warnings).toEqual([]);
    const release = (await h.pg.query(`SELECT id, kind, artifact_key FROM releases WHERE deployment_id = $1`, [id])).rows[0];
    expect(release.kind).toBe('node');
    // Started and healthy first, then served by the edge, and only then committed as live.
    const auth = `Bearer ${edgeInternalToken(h.masterKey)}`;
    expect(edgeCalls).toEqual([
      { url: `/_slipway/releases/${release.id}/start`, authorization: auth },
      { url: `/_slipway/applications/${appId}/switch/${release.id}`, authorization: auth },
    ]);
    const names = tarNames(Buffer.concat((await (await h.blobs.get(release.artifact_key)).toArray()) as Buffer[]));
    expect(names).toEqual(expect.arrayContaining(['server.js', 'package.json', 'node_modules/escape-html/index.js']));
  });

  it('a Node release that never becomes healthy fails the deploy with the log tail and leaves the live release alone', async () => {
    const appId = await h.createApplication();
    edgeAnswer = { status: 200, body: {} };
    const first = await h.waitForFinal(await h.deployFixture(appId, 'node-server'));
    expect(first.status).toBe('succeeded');
    const live = (await h.pg.query(`SELECT live_release_id FROM applications WHERE id = $1`, [appId])).rows[0].live_release_id;
    edgeAnswer = { status: 422, body: { error: 'the release did not answer its health check within 30 s', logTail: 'Error: listen EADDRINUSE' } };
    try {
      const row = await h.waitForFinal(await h.deployFixture(appId, 'node-server'));
      expect(row).toMatchObject({ status: 'failed', error: { code: 'release_unhealthy', step: 'release' } });
      expect(row.steps.find((s) => s.name === 'release')).toMatchObject({ status: 'failed', log: expect.stringContaining('EADDRINUSE') });
    } finally {
      edgeAnswer = { status: 200, body: {} };
    }
    expect((await h.pg.query(`SELECT live_release_id FROM applications WHERE id = $1`, [appId])).rows[0].live_release_id).toBe(live);
  });

  it('a failing build fails at build with its output', async () => {
    const row = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'broken-build'));
    expect(row).toMatchObject({ status: 'failed', error: { code: 'build_failed', step: 'build' } });
    expect(row.steps.find((s) => s.name === 'build')).toMatchObject({ status: 'failed', log: expect.stringContaining('fixture build failed on purpose') });
    expect(row.steps.filter((s) => s.status === 'skipped').map((s) => s.name)).toEqual(['install', 'scan', 'package', 'release']);
  });

  it('a server without a start script fails at analyze', async () => {
    const row = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'missing-start'));
    expect(row).toMatchObject({ status: 'failed', error: { code: 'no_start_script', step: 'analyze', message: expect.stringContaining('"start" script') } });
  });

  it('an unsupported project fails at analyze with a clear message', async () => {
    const row = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'unsupported'));
    expect(row).toMatchObject({ status: 'failed', error: { code: 'unsupported_project', step: 'analyze' } });
    expect(row.error!.message).toContain('only static sites and Node.js projects are supported');
  });

  it('a source with a path escaping the project fails at receive', async () => {
    const { default: tarStream } = await import('tar-stream');
    const pack = tarStream.pack();
    pack.entry({ name: '../escape.txt', mode: 0o644 }, 'x');
    pack.finalize();
    const tar = await buffer(pack);
    const row = await h.waitForFinal(await h.deploy(await h.createApplication(), tar));
    expect(row).toMatchObject({ status: 'failed', error: { code: 'bad_source', step: 'receive' } });
  });
});
