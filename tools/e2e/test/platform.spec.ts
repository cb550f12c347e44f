/**
 * A user's path through the whole platform, with nothing stubbed: launcher → gateway (upload,
 * queue) → build worker (bwrap build) → edge (serving by Host), driven by the real CLI binary.
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, alive, waitFor } from '@slipway/testing';
import { Platform, type Account } from './support/platform.js';
import { RequestLoop } from './support/request-loop.js';

describe('the platform end to end', () => {
  let platform: Platform;
  let cliEnv: Record<string, string>;
  let slug: string;
  let account: Account;

  beforeAll(async () => {
    platform = await Platform.start('e2e');
    account = await platform.bootstrap('e2e@example.com', 'E2E Shop');
    slug = account.slug;
    expect(account.appUrl).toBe(`http://${slug}.localhost:${platform.ports.edge}`);
    cliEnv = { SLIPWAY_API_KEY: account.apiKey };
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('deploys a static site from a folder and serves it at its address', async () => {
    const result = await platform.cli(['deploy', join(FIXTURES, 'static-site'), '--json'], cliEnv);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const task = JSON.parse(result.stdout);
    expect(task).toMatchObject({ status: 'succeeded', spec: { kind: 'static' }, url: `http://${slug}.localhost:${platform.ports.edge}` });
    expect(task.steps.map((s: { name: string }) => s.name)).toEqual(['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release']);
    const index = await readFile(join(FIXTURES, 'static-site', 'index.html'), 'utf8');
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });
    expect((await platform.viaEdge('nobody')).status).toBe(404);
  });

  it('deploys a Node server, keeps .env out of the upload, and tells the truth about a broken build', async () => {
    const app = await mkdtemp(join(tmpdir(), 'slipway-e2e-node-'));
    await cp(join(FIXTURES, 'node-server'), app, { recursive: true });
    await writeFile(join(app, '.env'), 'GREETING=from-a-file-that-must-not-be-uploaded\n');
    expect((await platform.cli(['secrets', 'set', 'GREETING=hello-e2e', '--json'], cliEnv)).code).toBe(0);

    const node = await platform.cli(['deploy', app, '--json'], cliEnv);
    expect(node.code).toBe(0);
    expect(JSON.parse(node.stdout)).toMatchObject({ status: 'succeeded', spec: { kind: 'node' } });
    const served = await platform.viaEdge(slug, '/hello');
    expect(served).toMatchObject({ status: 200, body: '<p>node fixture v1 /hello</p>' });
    expect(node.stdout).not.toContain('from-a-file-that-must-not-be-uploaded');

    const broken = await platform.cli(['deploy', join(FIXTURES, 'broken-build'), '--json'], cliEnv);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ status: 'failed', error: { step: 'build', code: 'build_failed' } });
    // The failed deploy leaves the previous release serving.
    expect(await platform.viaEdge(slug, '/hello')).toMatchObject({ status: 200, body: served.body });
    await rm(app, { recursive: true, force: true });
  });

  it('rolls back to the static release from the dashboard, without a rebuild', async () => {
    const dashboard = `http://127.0.0.1:${platform.ports.gateway}/dashboard/api`;
    const headers = { origin: `http://localhost:${platform.ports.gateway}`, 'x-slipway-csrf': '1', 'content-type': 'application/json' };
    // The owner made by `admin bootstrap` claims the account by signing up with its email.
    const signUp = await fetch(`${dashboard}/session/sign-up`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email: 'e2e@example.com', password: 'correct horse battery', name: 'E2E' }),
    });
    expect(signUp.status).toBeLessThan(300);
    const cookie = signUp.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const apps = (await (await fetch(`${dashboard}/applications`, { headers: { cookie } })).json()) as { applications: { id: string; slug: string }[] };
    const app = apps.applications.find((a) => a.slug === slug)!;
    const { releases } = (await (await fetch(`${dashboard}/applications/${app.id}/releases`, { headers: { cookie } })).json()) as {
      releases: { id: string; kind: string; live: boolean }[];
    };
    expect(releases.map((r) => [r.kind, r.live])).toEqual([
      ['node', true],
      ['static', false],
    ]);
    const staticRelease = releases.find((r) => r.kind === 'static')!;

    const rollback = await fetch(`${dashboard}/applications/${app.id}/releases/${staticRelease.id}/live`, { method: 'POST', headers: { ...headers, cookie } });
    expect(rollback.status).toBe(200);
    expect(((await rollback.json()) as typeof apps & { releases: { id: string; live: boolean }[] }).releases.find((r) => r.live)?.id).toBe(staticRelease.id);
    const index = await readFile(join(FIXTURES, 'static-site', 'index.html'), 'utf8');
    await waitFor(async () => (await platform.viaEdge(slug)).body === index, { timeoutMs: 10_000, what: 'the static release serving again' });

    const unknown = await fetch(`${dashboard}/applications/${app.id}/releases/00000000-0000-4000-8000-000000000000/live`, {
      method: 'POST',
      headers: { ...headers, cookie },
    });
    expect(unknown.status).toBe(404);
  });

  it("steers releases from the CLI with a project API key: promote and rollback swap under load with no failed request; another application's key gets 404", async () => {
    const listed = await platform.cli(['releases', '--json'], cliEnv);
    expect(listed.code).toBe(0);
    const { releases } = JSON.parse(listed.stdout) as { releases: { id: string; kind: string; live: boolean; sizeBytes: number; deploymentId: string }[] };
    // The dashboard rollback above left the static release live; the Node one is the newer.
    expect(releases.map((r) => [r.kind, r.live])).toEqual([
      ['node', false],
      ['static', true],
    ]);
    expect(releases.every((r) => r.sizeBytes > 0 && r.deploymentId)).toBe(true);
    const [nodeRelease, staticRelease] = releases as [(typeof releases)[0], (typeof releases)[0]];
    const index = await readFile(join(FIXTURES, 'static-site', 'index.html'), 'utf8');
    const loop = new RequestLoop(platform.ports.edge, `${slug}.localhost:${platform.ports.edge}`, '/');
    try {
      let started = Date.now();
      const promote = await platform.cli(['promote', nodeRelease.id, '--json'], cliEnv);
      expect([promote.code, promote.stderr]).toEqual([0, '']);
      expect(JSON.parse(promote.stdout)).toMatchObject({ liveReleaseId: nodeRelease.id, previousReleaseId: staticRelease.id });
      // Health-gated and switched before the answer: the very next request is the Node release's.
      expect(await platform.viaEdge(slug, '/hello')).toMatchObject({ status: 200, body: '<p>node fixture v1 /hello</p>' });
      console.log(`promote (static → node) took ${Date.now() - started} ms`);

      started = Date.now();
      const rollback = await platform.cli(['rollback', '--json'], cliEnv);
      expect([rollback.code, rollback.stderr]).toEqual([0, '']);
      expect(JSON.parse(rollback.stdout)).toMatchObject({ liveReleaseId: staticRelease.id, previousReleaseId: nodeRelease.id });
      expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });
      console.log(`rollback (node → static) took ${Date.now() - started} ms`);
    } finally {
      await loop.stop();
    }
    const bodies = new Set(loop.samples.map((s) => (s.body === index ? 'static' : s.body.includes('node fixture') ? 'node' : s.body.slice(0, 60))));
    console.log(`request loop: ${loop.samples.length} requests, ${loop.failures().length} failed, served: ${[...bodies].join(', ')}`);
    expect(loop.failures()).toEqual([]);
    expect([...bodies].sort()).toEqual(['node', 'static']);

    // An owner token works too (its application named, or the only one).
    const byToken = await platform.cli(['releases', '--json', '--token', account.ownerToken], { SLIPWAY_API_KEY: '' });
    expect([byToken.code, JSON.parse(byToken.stdout).releases.length]).toEqual([0, 2]);

    // Another application's project key (another owner's): 404 for all of it, nothing switched.
    const other = await platform.bootstrap('other@example.com', 'Other Shop');
    for (const args of [['releases'], ['rollback'], ['promote', nodeRelease.id]]) {
      const refused = await platform.cli([...args, '--json', '--application', account.applicationId], { SLIPWAY_API_KEY: other.apiKey });
      expect([args[0], refused.code, JSON.parse(refused.stdout)]).toEqual([args[0], 1, expect.objectContaining({ code: 'not_found', status: 404 })]);
    }
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });
  });

  it("deploys a preview at its own address with the preview's secrets while production keeps serving; another application's key gets 404 for all of it", async () => {
    const app = await mkdtemp(join(tmpdir(), 'slipway-e2e-preview-'));
    await writeFile(
      join(app, 'server.js'),
      "import { createServer } from 'node:http';\ncreateServer((req, res) => res.end(req.url === '/healthz' ? 'ok' : `<p>preview app: ${process.env.GREETING} ${process.env.ONLY_PREVIEW ?? '-'}</p>`)).listen(Number(process.env.PORT));\n",
    );
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'preview-app', private: true, type: 'module', scripts: { start: 'node server.js' } }));
    // One value for both, one for previews only, and GREETING's own preview value.
    expect((await platform.cli(['secrets', 'set', 'GREETING=for-production', '--json'], cliEnv)).code).toBe(0);
    const scoped = await platform.cli(['secrets', 'set', 'GREETING=for-previews', 'ONLY_PREVIEW=yes', '--preview', '--json'], cliEnv);
    expect([scoped.code, scoped.stderr]).toEqual([0, '']);
    const listed = await platform.cli(['secrets', 'list', '--preview', '--json'], cliEnv);
    expect(JSON.parse(listed.stdout).secrets).toEqual(
      expect.arrayContaining([
        { name: 'GREETING', scopes: ['all', 'preview'] },
        { name: 'ONLY_PREVIEW', scopes: ['preview'] },
      ]),
    );

    const index = await readFile(join(FIXTURES, 'static-site', 'index.html'), 'utf8');
    const before = await platform.viaEdge(slug);
    expect(before).toMatchObject({ status: 200, body: index });
    const loop = new RequestLoop(platform.ports.edge, `${slug}.localhost:${platform.ports.edge}`, '/');
    let deployed: Awaited<ReturnType<Platform['cli']>>;
    try {
      deployed = await platform.cli(['deploy', app, '--preview', 'feat', '--json'], cliEnv);
    } finally {
      await loop.stop();
    }
    expect([deployed.code, deployed.stderr.replace(/^slipway: .*\n/gm, '')]).toEqual([0, '']);
    const previewUrl = `http://${slug}--feat.localhost:${platform.ports.edge}`;
    expect(JSON.parse(deployed.stdout)).toMatchObject({ status: 'succeeded', spec: { kind: 'node' }, url: previewUrl });
    expect(await platform.viaEdge(`${slug}--feat`, '/')).toMatchObject({ status: 200, body: '<p>preview app: for-previews yes</p>' });
    // `slipway status` finds a preview's task too (through the owners' API).
    const status = await platform.cli(['status', JSON.parse(deployed.stdout).taskId, '--json'], cliEnv);
    expect([status.code, JSON.parse(status.stdout).status, JSON.parse(status.stdout).url]).toEqual([0, 'succeeded', previewUrl]);
    // Production never changed: the same release, no failed request while the preview deployed.
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });
    expect(loop.failures()).toEqual([]);
    expect(new Set(loop.samples.map((s) => s.body))).toEqual(new Set([index]));
    const releases = JSON.parse((await platform.cli(['releases', '--json'], cliEnv)).stdout).releases as {
      id: string;
      kind: string;
      live: boolean;
      preview: string | null;
    }[];
    expect(releases.find((r) => r.live)?.kind).toBe('static');
    // The preview's release is listed, named by its preview, and never promoted to production.
    const previewRelease = releases.find((r) => r.preview === 'feat')!;
    expect(previewRelease).toMatchObject({ kind: 'node', live: false });
    const promote = await platform.cli(['promote', previewRelease.id, '--json'], cliEnv);
    expect([promote.code, JSON.parse(promote.stdout)]).toEqual([1, expect.objectContaining({ code: 'bad_request' })]);
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });

    // Its logs are its own: what its release wrote (the platform's start note at least), none of production's.
    const previewLogs = await platform.cli(['logs', '--preview', 'feat', '--since', '1h', '--json'], cliEnv);
    expect([previewLogs.code, previewLogs.stderr]).toEqual([0, '']);
    const logLines = previewLogs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { releaseId: string });
    expect(logLines.length).toBeGreaterThan(0);
    expect(new Set(logLines.map((l) => l.releaseId))).toEqual(new Set([previewRelease.id]));
    expect((await platform.cli(['logs', '--preview', 'nope', '--json'], cliEnv)).code).toBe(1);

    const previews = await platform.cli(['previews', '--json'], cliEnv);
    expect(JSON.parse(previews.stdout)).toMatchObject({
      previews: [{ name: 'feat', url: previewUrl, liveReleaseId: expect.any(String) }],
      limit: expect.any(Number),
    });

    // Another owner's project key, naming this application: 404 for all of it, nothing made or changed.
    const other = await platform.bootstrap('preview-other@example.com', 'Preview Other');
    const otherEnv = { SLIPWAY_API_KEY: other.apiKey };
    for (const args of [
      ['previews'],
      ['previews', 'rm', 'feat'],
      ['secrets', 'set', 'GREETING=stolen', '--preview'],
      ['secrets', 'list', '--preview'],
      ['deploy', app, '--preview', 'evil'],
    ]) {
      const refused = await platform.cli([...args, '--json', '--application', account.applicationId], otherEnv);
      expect([args.join(' '), refused.code, JSON.parse(refused.stdout)]).toEqual([
        args.join(' '),
        1,
        expect.objectContaining({ code: 'not_found', status: 404 }),
      ]);
    }
    expect((await platform.viaEdge(`${slug}--evil`)).status).toBe(404);
    expect(await platform.viaEdge(`${slug}--feat`, '/')).toMatchObject({ status: 200, body: '<p>preview app: for-previews yes</p>' });

    // Deleted: its address stops answering; production still serves.
    const removed = await platform.cli(['previews', 'rm', 'feat', '--json'], cliEnv);
    expect([removed.code, JSON.parse(removed.stdout)]).toEqual([0, { removed: 'feat' }]);
    await waitFor(async () => (await platform.viaEdge(`${slug}--feat`)).status === 404, { timeoutMs: 15_000, what: 'the deleted preview to stop answering' });
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: index });
    await rm(app, { recursive: true, force: true });
  }, 240_000);

  it('refuses a rollback to a release that does not become healthy (release_unhealthy, its log tail quoted), and the live release serves on with no failed request', async () => {
    const app = await mkdtemp(join(tmpdir(), 'slipway-e2e-unhealthy-'));
    const version = (v: string) =>
      writeFile(
        join(app, 'server.js'),
        `import { createServer } from 'node:http';\nif (process.env.CRASH_ON_START === '1') { console.error('refusing to start: CRASH_ON_START'); process.exit(3); }\ncreateServer((req, res) => res.end('crashy ${v}')).listen(Number(process.env.PORT));\n`,
      );
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'crashy', private: true, type: 'module', scripts: { start: 'node server.js' } }));
    for (const v of ['v1', 'v2']) {
      await version(v);
      const deployed = await platform.cli(['deploy', app, '--json'], cliEnv);
      expect([v, deployed.code, JSON.parse(deployed.stdout).status]).toEqual([v, 0, 'succeeded']);
    }
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: 'crashy v2' });
    // A secret the running v2 does not see until it starts again; v1, started for the rollback, does.
    expect((await platform.cli(['secrets', 'set', 'CRASH_ON_START=1', '--json'], cliEnv)).code).toBe(0);
    const loop = new RequestLoop(platform.ports.edge, `${slug}.localhost:${platform.ports.edge}`, '/');
    let rollback: Awaited<ReturnType<Platform['cli']>>;
    try {
      rollback = await platform.cli(['rollback', '--json'], cliEnv);
    } finally {
      await loop.stop();
    }
    expect(rollback.code).toBe(1);
    expect(JSON.parse(rollback.stdout)).toMatchObject({
      code: 'release_unhealthy',
      status: 422,
      error: expect.stringContaining('refusing to start: CRASH_ON_START'),
    });
    expect(loop.failures()).toEqual([]);
    expect(new Set(loop.samples.map((s) => s.body))).toEqual(new Set(['crashy v2']));
    const releases = JSON.parse((await platform.cli(['releases', '--json'], cliEnv)).stdout).releases as { live: boolean; preview: string | null }[];
    expect(releases.filter((r) => r.preview === null)[0]!.live).toBe(true);
    expect(await platform.viaEdge(slug)).toMatchObject({ status: 200, body: 'crashy v2' });
    expect((await platform.cli(['secrets', 'unset', 'CRASH_ON_START', '--json'], cliEnv)).code).toBe(0);
    await rm(app, { recursive: true, force: true });
  }, 240_000);

  it('deploys projects holding in-tree symbolic links: a static site with CLAUDE.md -> AGENTS.md, a Node server importing through a linked folder', async () => {
    const linked = await platform.bootstrap('links@example.com', 'Linked Projects');
    const env = { SLIPWAY_API_KEY: linked.apiKey };
    const site = await mkdtemp(join(tmpdir(), 'slipway-e2e-links-static-'));
    await mkdir(join(site, 'pages'));
    await writeFile(join(site, 'index.html'), '<h1>linked site</h1>');
    await writeFile(join(site, 'AGENTS.md'), '# instructions for agents');
    await writeFile(join(site, 'pages/about.html'), '<p>about, through a link</p>');
    await symlink('AGENTS.md', join(site, 'CLAUDE.md'));
    await symlink('pages/about.html', join(site, 'about.html'));
    const staticDeploy = await platform.cli(['deploy', site, '--json'], env);
    expect([staticDeploy.code, staticDeploy.stdout.slice(0, 2000)]).toEqual([0, expect.any(String)]);
    expect(JSON.parse(staticDeploy.stdout)).toMatchObject({ status: 'succeeded', spec: { kind: 'static' } });
    expect(await platform.viaEdge(linked.slug, '/')).toMatchObject({ status: 200, body: '<h1>linked site</h1>' });
    expect(await platform.viaEdge(linked.slug, '/CLAUDE.md')).toMatchObject({ status: 200, body: '# instructions for agents' });
    expect(await platform.viaEdge(linked.slug, '/about.html')).toMatchObject({ status: 200, body: '<p>about, through a link</p>' });

    const server = await mkdtemp(join(tmpdir(), 'slipway-e2e-links-node-'));
    await mkdir(join(server, 'shared'));
    await writeFile(join(server, 'package.json'), JSON.stringify({ name: 'linked-node', private: true, type: 'module', scripts: { start: 'node server.js' } }));
    await writeFile(join(server, 'shared/greeting.js'), "export const greeting = 'hello through a linked folder';\n");
    await writeFile(
      join(server, 'server.js'),
      "import { createServer } from 'node:http';\nimport { greeting } from './lib/greeting.js';\ncreateServer((req, res) => res.end(greeting)).listen(Number(process.env.PORT));\n",
    );
    await writeFile(join(server, 'AGENTS.md'), '# agents');
    await symlink('shared', join(server, 'lib'));
    await symlink('AGENTS.md', join(server, 'CLAUDE.md'));
    const nodeDeploy = await platform.cli(['deploy', server, '--json'], env);
    expect([nodeDeploy.code, nodeDeploy.stdout.slice(0, 2000)]).toEqual([0, expect.any(String)]);
    const task = JSON.parse(nodeDeploy.stdout);
    expect(task).toMatchObject({ status: 'succeeded', spec: { kind: 'node' } });
    expect(await platform.viaEdge(linked.slug, '/')).toMatchObject({ status: 200, body: 'hello through a linked folder' });
    await rm(site, { recursive: true, force: true });
    await rm(server, { recursive: true, force: true });
  }, 240_000);

  it('stops everything on Ctrl-C', async () => {
    const runtime = await platform.runtime();
    process.kill(platform.launcher.child.pid!, 'SIGINT');
    expect((await platform.launcher.exited).code).toBe(0);
    expect(Object.values(runtime.processes).filter(alive)).toEqual([]);
  });
});
