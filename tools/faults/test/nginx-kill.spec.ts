/**
 * nginx, the data plane of `pnpm start`, killed under a steady request loop against a deployed
 * Node app. kill -9 of its master: the runtime supervisor's keeper starts a new master at once on
 * the same listening sockets (which it, not nginx, owns) and retires the old master's orphaned
 * workers — zero failed app requests, nothing of the old instance left — and the edge still
 * reloads nginx: a deploy afterwards is served. kill -9 of a worker: nginx's master replaces it.
 * Each figure is printed.
 */
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@slipway/testing';
import { fixtureDir } from './support/fixtures.js';
import { LaunchedPlatform, RequestLoop } from './support/launched.js';
import type { Account } from './support/platform.js';

/** The launcher's default DRAIN_GRACE_MS: old workers still running after it get SIGKILL. */
const DRAIN_GRACE_MS = 5_000;

interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  title: string;
}

/** Live (non-zombie) processes whose title starts with `prefix`. */
async function processes(prefix: string): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const title = (await readFile(`/proc/${name}/cmdline`, 'latin1').catch(() => '')).replace(/\0+$/, '').replace(/\0/g, ' ');
    if (!title.startsWith(prefix)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'latin1').catch(() => '');
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat && state !== 'Z') out.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), title });
  }
  return out;
}

describe('fault: nginx killed under pnpm start, with an app under steady traffic', () => {
  let platform: LaunchedPlatform;
  let steady: Account;
  let other: Account;
  let loop: RequestLoop;
  let stateDir: string;
  const dirs: string[] = [];

  /** The master the pid file names, checked to be the nginx of this platform's state directory. */
  const master = async (): Promise<number> => {
    const pid = Number((await readFile(join(stateDir, 'nginx.pid'), 'utf8')).trim());
    const [proc] = (await processes('nginx: master process')).filter((p) => p.pid === pid && p.title.includes(stateDir));
    if (!proc) throw new Error(`no nginx master of ${stateDir} running (pid file: ${pid})`);
    return pid;
  };
  const workersOf = async (pid: number) => (await processes('nginx: ')).filter((p) => p.ppid === pid);

  beforeAll(async () => {
    platform = await LaunchedPlatform.start('nginx-kill');
    stateDir = join(platform.home, 'runtime', 'nginx');
    steady = await platform.bootstrap('nginx-kill@example.com', 'Nginx Steady');
    other = await platform.bootstrap('nginx-kill-2@example.com', 'Nginx Other');
    const source = await fixtureDir('node-server');
    dirs.push(source);
    const deployed = await platform.deploy(steady, source);
    if (deployed.status !== 'succeeded') throw new Error(`deploy failed: ${JSON.stringify(deployed).slice(0, 2000)}`);
    loop = new RequestLoop(platform.ports.edge, `${steady.slug}.localhost:${platform.ports.edge}`, '/hello');
    await loop.answeredAfter(Date.now() - 1000, 30_000);
  }, 300_000);

  afterAll(async () => {
    await loop?.stop();
    if (platform?.launcher.child.exitCode === null) await platform.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('nginx runs in a process group of its own (the runtime supervisor\'s can be killed whole without it)', async () => {
    const pid = await master();
    const [nginx] = (await processes('nginx: master process')).filter((p) => p.pid === pid);
    const supervisor = await platform.pid('runtime');
    const stat = await readFile(`/proc/${supervisor}/stat`, 'latin1');
    const supervisorGroup = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    expect(nginx!.pgrp).toBe(pid);
    expect(nginx!.pgrp).not.toBe(supervisorGroup);
  });

  it('kill -9 of nginx\'s master: zero failed app requests, no orphan left, and a deploy afterwards is served', async () => {
    const old = await master();
    const oldWorkers = (await workersOf(old)).map((p) => p.pid);
    expect(oldWorkers.length).toBeGreaterThan(0);
    await loop.answeredAfter(Date.now());

    const killedAt = Date.now();
    process.kill(old, 'SIGKILL');
    const next = await waitFor(async () => {
      const pid = await master().catch(() => undefined);
      return pid && pid !== old ? pid : undefined;
    }, { timeoutMs: 30_000, intervalMs: 20, what: 'a new nginx master' });
    const takeover = Date.now() - killedAt;
    // Nothing of the old instance left: its workers (in its process group) finish and go.
    await waitFor(async () => ((await processes('nginx: ')).some((p) => p.pgrp === old || oldWorkers.includes(p.pid)) ? undefined : true), { timeoutMs: DRAIN_GRACE_MS + 10_000, intervalMs: 50, what: 'the old master\'s workers to be gone' });
    const orphansGone = Date.now() - killedAt;
    // At least two seconds of traffic around the kill are counted.
    const settled = await loop.answeredAfter(Math.max(Date.now(), killedAt + 2_000));
    const during = loop.between(killedAt, settled.at + 1);
    const failed = during.filter((s) => s.status !== 200).length;
    process.stdout.write(`nginx-kill: master kill -9 → new master in ${takeover} ms, old workers gone after ${orphansGone} ms; ${failed} of ${during.length} app requests failed\n`);
    expect(during.length).toBeGreaterThan(0);
    expect(failed).toBe(0);
    expect(platform.log()).toMatch(new RegExp(`nginx master ${old} exited \\(SIGKILL\\); a new master takes over its listening sockets now`));
    expect((await workersOf(next)).length).toBeGreaterThan(0);

    // Routes still change. A changed release of the app (a slot switch) ...
    const changed = await fixtureDir('node-server', { 'server.js': (await readFile(join(dirs[0]!, 'server.js'), 'utf8')).replace("const version = 'v1'", "const version = 'v2'") });
    dirs.push(changed);
    expect(await platform.deploy(steady, changed)).toMatchObject({ status: 'succeeded' });
    const v2 = await waitFor(async () => {
      const reply = await platform.viaEdge(steady.slug, '/hello');
      return reply.status === 200 && reply.body.includes('node fixture v2') ? reply : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100, what: 'the changed release to be served' });
    expect(v2.body).toContain('v2');
    // ... and a new application (a new server block: a reload of the new master).
    const site = await fixtureDir('static-site');
    dirs.push(site);
    expect(await platform.deploy(other, site)).toMatchObject({ status: 'succeeded' });
    const served = await waitFor(async () => {
      const reply = await platform.viaEdge(other.slug, '/');
      return reply.status === 200 ? reply : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100, what: 'the new application to be served' });
    expect(served.status).toBe(200);
    const conf = await readFile(join(stateDir, 'nginx.conf'), 'utf8');
    expect(conf).toContain(`server_name ${other.slug}.localhost;`);
    expect(await master()).toBe(next);
    const after = Date.now();
    await loop.answeredAfter(after + 500);
    expect(loop.between(killedAt).filter((s) => s.status !== 200)).toEqual([]);
  }, 240_000);

  it('kill -9 of an nginx worker: its master replaces it, zero failed app requests', async () => {
    const pid = await master();
    const [worker] = await workersOf(pid);
    await loop.answeredAfter(Date.now());
    const killedAt = Date.now();
    process.kill(worker!.pid, 'SIGKILL');
    const replaced = await waitFor(async () => ((await workersOf(pid)).some((w) => w.pid !== worker!.pid && w.title === 'nginx: worker process') ? Date.now() : undefined), { timeoutMs: 10_000, intervalMs: 10, what: 'a new worker' });
    const settled = await loop.answeredAfter(Math.max(Date.now(), killedAt + 2_000));
    const during = loop.between(killedAt, settled.at + 1);
    const failed = during.filter((s) => s.status !== 200).length;
    process.stdout.write(`nginx-kill: worker kill -9 → replaced by its master in ${replaced - killedAt} ms; ${failed} of ${during.length} app requests failed\n`);
    expect(await master()).toBe(pid);
    expect(during.length).toBeGreaterThan(0);
    expect(failed).toBe(0);
  }, 60_000);

  it('kill -9 of the runtime supervisor: nginx keeps running and the restarted supervisor adopts its master (no new one, no bind error)', async () => {
    const pid = await master();
    const supervisor = await platform.pid('runtime');
    process.kill(supervisor, 'SIGKILL');
    await waitFor(async () => ((await platform.pid('runtime').catch(() => supervisor)) !== supervisor ? true : undefined), { timeoutMs: 60_000, intervalMs: 100, what: 'the runtime supervisor to be restarted' });
    await platform.launcher.waitForOutput(new RegExp(`nginx data plane: adopted the running master ${pid}`), 60_000);
    process.stdout.write(`nginx-kill: runtime supervisor kill -9 → nginx master ${pid} adopted by the restarted supervisor\n`);
    expect(await master()).toBe(pid);
    expect(platform.log()).not.toMatch(/Address already in use/);
  }, 90_000);

  it('Ctrl-C stops nginx too: nothing of it is left', async () => {
    const pid = await master();
    await loop.stop();
    const { code } = await platform.stop();
    expect(code).toBe(0);
    expect((await processes('nginx: ')).filter((p) => p.pgrp === pid || p.pid === pid)).toEqual([]);
  }, 90_000);
});
