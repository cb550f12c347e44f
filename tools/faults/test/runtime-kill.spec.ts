/**
 * The platform as `pnpm start` runs it, under a steady request loop against a deployed Node app:
 * kill -9 of the runtime supervisor (the process that owns the apps) costs the app nothing. Its
 * processes are not tied to the supervisor: they keep serving, the launcher restarts the
 * supervisor, which takes them over from its state file, and the edge reconnects and claims them
 * again by itself. Printed: failed app requests and the seconds until every /health/ready is 200
 * again. Then a deploy still works (the edge talks to the new supervisor), and Ctrl-C leaves no
 * app process behind.
 *
 * `EDGE_DATA_PLANE` in this suite's environment overrides pnpm start's default (nginx) for the
 * platform it launches.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { LaunchedPlatform, RequestLoop, processesNaming } from './support/launched.js';
import type { Account } from './support/platform.js';

const SERVICES = ['gateway', 'auth-service', 'edge', 'build-worker'] as const;

describe('fault: kill -9 of the runtime supervisor under pnpm start, with an app under steady traffic', () => {
  let platform: LaunchedPlatform;
  let account: Account;
  let loop: RequestLoop;
  let releases: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    const plane = process.env['EDGE_DATA_PLANE'];
    platform = await LaunchedPlatform.start('runtime-kill', plane ? { EDGE_DATA_PLANE: plane } : {});
    releases = join(platform.home, 'runtime', 'releases');
    account = await platform.bootstrap('runtime-kill@example.com', 'Steady');
    const source = await fixtureDir('node-server');
    dirs.push(source);
    const deployed = await platform.cli(['deploy', source, '--json'], platform.cliEnv(account));
    if (deployed.code !== 0) throw new Error(`deploy failed: ${deployed.stdout} ${deployed.stderr}`);
    loop = new RequestLoop(platform.ports.edge, `${account.slug}.localhost:${platform.ports.edge}`, '/hello');
    await loop.answeredAfter(Date.now() - 1000, 30_000);
  }, 300_000);

  afterAll(async () => {
    await loop?.stop();
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('kill -9 of the runtime supervisor: 0 failed app requests, the same app processes, the supervisor back by itself', async () => {
    const before = (await processesNaming(releases)).map((p) => p.pid).sort();
    expect(before.length).toBeGreaterThan(0);
    const supervisor = await platform.pid('runtime');

    const killedAt = Date.now();
    process.kill(supervisor, 'SIGKILL');
    // Back by itself: the launcher restarts it, and it answers on its socket.
    const back = await platform.launcher.waitForOutput(/launcher\s+\| runtime is back \(pid \d+\)[^\n]*/, 60_000);
    const backAt = Date.now();
    expect(await platform.pid('runtime')).not.toBe(supervisor);
    // The edge reconnected to it and claimed the app again.
    await platform.launcher.waitForOutput(/reconnected to the runtime supervisor \d+ ms after the connection closed; 1 running release\(s\) claimed again/, 60_000);
    const readyAt = await waitFor(async () => ((await Promise.all(SERVICES.map((s) => platform.ready(s)))).every((status) => status === 200) ? Date.now() : undefined), { timeoutMs: 60_000, intervalMs: 100, what: 'every /health/ready to answer 200' });
    await loop.answeredAfter(Date.now() + 500, 10_000);

    const during = loop.between(killedAt);
    const failed = during.filter((s) => s.status !== 200);
    process.stdout.write(`runtime-kill: runtime supervisor kill -9 → ${failed.length} failed app requests of ${during.length}; supervisor back in ${((backAt - killedAt) / 1000).toFixed(1)} s (${back.replace(/^launcher\s+\| /, '')}); every /health/ready 200 after ${((readyAt - killedAt) / 1000).toFixed(1)} s; data plane: ${platform.log().includes('nginx data plane: master') ? 'nginx' : 'node edge'}\n`);
    if (failed.length) process.stdout.write(`runtime-kill: failed from ${new Date(failed[0]!.at).toISOString()} to ${new Date(failed[failed.length - 1]!.at).toISOString()} (killed at ${new Date(killedAt).toISOString()}); runtime's log:\n${platform.serviceLog('runtime', 25).join('\n')}\n`);
    expect(failed).toEqual([]);
    // The very same app processes: none was restarted.
    const after = (await processesNaming(releases)).map((p) => p.pid).sort();
    expect(after).toEqual(before);
    expect(platform.log()).toMatch(/took over 1 running release\(s\) from the previous runtime supervisor/);
  }, 180_000);

  it('afterwards a deploy still works: the edge starts the new release through the new supervisor', async () => {
    const supervisor = await platform.pid('runtime');
    const source = await fixtureDir('node-server', { 'server.js': (await readFile(join(dirs[0]!, 'server.js'), 'utf8')).replace("'v1'", "'v2'") });
    dirs.push(source);
    const deployedAt = Date.now();
    const task = await platform.deploy(account, source);
    expect(task.status).toBe('succeeded');
    await waitFor(async () => ((await platform.viaEdge(account.slug, '/hello')).body.includes('node fixture v2') ? true : undefined), { timeoutMs: 30_000, what: 'the new release to be served' });
    // The new release's processes descend from the new supervisor.
    const processes = await processesNaming(releases);
    const parents = new Set(processes.map((p) => p.ppid));
    expect(parents.has(supervisor)).toBe(true);
    expect(loop.between(deployedAt).filter((s) => s.status !== 200)).toEqual([]);
  }, 240_000);

  it('Ctrl-C stops everything: no app process is left running', async () => {
    await loop.stop();
    const { code } = await platform.stop();
    expect(code).toBe(0);
    expect(await processesNaming(releases)).toEqual([]);
  }, 90_000);
});
