/**
 * A runtime supervisor killed with SIGKILL (its whole process group, as the launcher does before
 * it starts another), and a new one started: the apps it ran keep running in their real
 * sandboxes (bubblewrap, pasta, cgroups), keep answering through their ports during the gap, and
 * the new supervisor takes them over — their logs, their crash restarts, their stop — while the
 * edge's RemoteRuntimeDriver reconnects and claims them by itself. Runs the built supervisor
 * (`apps/runtime-supervisor/dist/main.js`, `nx test runtime-supervisor` builds it); needs root, bwrap and pasta.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore } from '@slipway/blob';
import { SERVICE_ENTRIES } from '@slipway/config';
import { RemoteRuntimeDriver } from '@slipway/data-plane';
import { type ReleaseToRun } from '@slipway/runtime';
import { removeAppUser } from '@slipway/sandbox';
import { ROOT, freePort, startProcess, waitFor, type RunningProcess } from '@slipway/testing';

/** Answers its boot id (a new one per process), logs a numbered, timed line every 50 ms, exits on /crash (saying so on stderr). */
const APP = `
const boot = require('node:crypto').randomUUID();
let n = 0;
setInterval(() => console.log('tick ' + (++n) + ' at ' + Date.now()), 50);
require('node:http').createServer((req, res) => {
  if (req.url === '/crash') { res.end('bye'); console.error('error: asked to crash'); setTimeout(() => process.exit(3), 20); return; }
  res.end(boot);
}).listen(Number(process.env.PORT));
`;

const SECRET = `canary-${randomBytes(6).toString('hex')}`;

/** Requests the app on `port` one after another, a new connection each, until stopped (bounded). */
class Loop {
  readonly samples: { at: number; status: number; body: string }[] = [];
  private stopped = false;
  private readonly done: Promise<void>;
  constructor(
    private readonly port: number,
    maxMs = 120_000,
  ) {
    this.done = (async () => {
      const end = Date.now() + maxMs;
      while (!this.stopped && Date.now() < end && this.samples.length < 20_000) {
        const at = Date.now();
        this.samples.push({ at, ...(await this.one()) });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }
  private one(): Promise<{ status: number; body: string }> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: this.port, path: '/', agent: false, timeout: 3000 }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      });
      req.on('error', () => resolve({ status: 0, body: '' }));
      req.on('timeout', () => req.destroy());
      req.end();
    });
  }
  between(from: number, to = Infinity) {
    return this.samples.filter((s) => s.at >= from && s.at < to);
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** Processes whose command line names `needle` (a sandbox names its release directory). */
async function processesNaming(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    if ((await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).includes(needle)) found.push(Number(name));
  }
  return found;
}

/** Whether `pid` runs (a zombie, left to whoever adopted the orphan to reap, does not). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
}

/** The release's cgroup directories still there (any hierarchy). */
function cgroupDirs(releaseId: string): string[] {
  const out = execFileSync('find', ['/sys/fs/cgroup', '-maxdepth', '7', '-type', 'd', '-name', releaseId], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  return out ? out.split('\n') : [];
}

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('runtime supervisor killed with SIGKILL: its apps keep running and the next one takes them over', () => {
  let home: string;
  let socketPath: string;
  let runtimeDir: string;
  let stateDir: string;
  let edgePort: number;
  const applicationId = randomUUID();
  const supervisors: RunningProcess[] = [];
  let launcher: ChildProcess | undefined;
  let loop: Loop | undefined;
  let edge: RemoteRuntimeDriver | undefined;

  const spec = (releaseId: string): ReleaseToRun => ({
    releaseId,
    applicationId,
    slug: 'adopt',
    artifactKey: 'releases/app.tar.gz',
    startCommand: 'node server.js',
    env: { SECRET },
  });

  function startSupervisor(extra: Record<string, string> = {}): RunningProcess {
    const supervisor = startProcess(process.execPath, [join(ROOT, SERVICE_ENTRIES.runtime)], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        NO_COLOR: '1',
        SLIPWAY_HOME: home,
        BLOB_DIR: join(home, 'blobs'),
        PORT: String(edgePort),
        RUNTIME_SUPERVISOR_SOCKET: socketPath,
        RUNTIME_ADOPT_GRACE_MS: '4000',
        HEALTH_TIMEOUT_MS: '20000',
        RUNTIME_MEMORY_MB: '256',
        ...extra,
      },
    });
    supervisors.push(supervisor);
    return supervisor;
  }

  /** SIGKILL of the supervisor's whole process group, as the launcher clears a dead supervisor's. */
  async function killSupervisor(supervisor: RunningProcess): Promise<void> {
    process.kill(-supervisor.child.pid!, 'SIGKILL');
    await supervisor.exited;
  }

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-adopt-'));
    await chmod(home, 0o711);
    socketPath = join(home, 'supervisor', 'runtime.sock');
    runtimeDir = join(home, 'runtime');
    stateDir = join(runtimeDir, 'supervisor');
    edgePort = await freePort();
    const src = join(home, 'src');
    await mkdir(src);
    await writeFile(join(src, 'server.js'), APP);
    await writeFile(join(src, 'package.json'), JSON.stringify({ name: 'adopt', private: true }));
    execFileSync('tar', ['-czf', join(home, 'app.tar.gz'), '-C', src, 'server.js', 'package.json']);
    await createBlobStore({ BLOB_DIR: join(home, 'blobs') }).put('releases/app.tar.gz', createReadStream(join(home, 'app.tar.gz')));
  });

  // Whatever a test left (a failed one included) stops before the next: SIGTERM stops a supervisor's apps.
  afterEach(async () => {
    await loop?.stop();
    edge?.close();
    for (const s of supervisors.splice(0)) await s.stop('SIGTERM', 15_000);
    launcher?.kill('SIGKILL');
  });

  afterAll(async () => {
    await removeAppUser(applicationId);
    await rm(home, { recursive: true, force: true });
  });

  it("kill -9, a new supervisor: same pid, 0 failed requests in the gap, the gap's logs arrive, a crash is restarted, and the launcher gone stops it all", async () => {
    const first = startSupervisor();
    let lost = '';
    edge = await RemoteRuntimeDriver.connect(socketPath, runtimeDir, 30_000, (reason) => (lost = reason));
    const releaseId = randomUUID();
    const running = await edge.start(spec(releaseId));
    const [before] = await edge.list();
    expect(before).toMatchObject({ releaseId, port: running.port, pid: expect.any(Number) });
    loop = new Loop(running.port);
    const boot = await waitFor(() => loop!.samples.find((s) => s.status === 200)?.body, { timeoutMs: 10_000, what: 'the app to answer' });
    expect(await running.report!()).toMatchObject({ crashes: 0, restarts: 0, errorLines: 0 });

    // Root-only state, the apps' identity and no secret.
    expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(stateDir, 'releases.json'))).mode & 0o777).toBe(0o600);
    const state = await readFile(join(stateDir, 'releases.json'), 'utf8');
    expect(state).not.toContain(SECRET);
    expect(JSON.parse(state).releases).toEqual([expect.objectContaining({ releaseId, applicationId, pid: before!.pid, port: running.port, sandboxed: true })]);

    const killedAt = Date.now();
    await killSupervisor(first);
    // The gap: nobody reads the app's output and nobody supervises it.
    await new Promise((r) => setTimeout(r, 1500));
    const sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
    launcher = sleeper;
    const second = startSupervisor({ SLIPWAY_LAUNCHER_PID: String(sleeper.pid) });
    await second.waitForOutput(/took over \d+ running release|recorded release\(s\) no longer running/, 30_000);
    const restartedAt = Date.now();
    const gapEnd = Date.now() + 1000;
    await waitFor(() => loop!.samples.some((s) => s.at > gapEnd), { timeoutMs: 10_000, what: 'requests after the gap' });
    const during = loop.between(killedAt, gapEnd);
    const failed = during.filter((s) => s.status !== 200 || s.body !== boot);
    process.stdout.write(
      `runtime-adopt: supervisor kill -9 → the new one started ${restartedAt - killedAt} ms later; ${during.length} app requests meanwhile, ${failed.length} failed or answered by another process\n`,
    );
    expect(failed).toEqual([]);
    expect(during.length).toBeGreaterThan(20);
    expect(second.output()).toMatch(/took over 1 running release\(s\) from the previous runtime supervisor/);
    // The edge reconnects and claims it by itself: the very same process.
    await second.waitForOutput(new RegExp(`release ${releaseId} adopted by the edge again`), 30_000);
    const [after] = await edge.list();
    expect(after).toEqual(before);
    expect(lost).toBe('');

    // What it printed while no supervisor read it arrives in its log afterwards.
    const gapTicks = await waitFor(
      async () => {
        const log = (await edge!.readLog(releaseId)) ?? '';
        const times = [...log.matchAll(/^\S+ stdout tick \d+ at (\d+)$/gm)].map((m) => Number(m[1]));
        const inGap = times.filter((t) => t > killedAt + 100 && t < restartedAt - 600);
        return inGap.length >= 10 ? inGap : undefined;
      },
      { timeoutMs: 10_000, what: 'the lines written during the gap in the log' },
    );
    expect(gapTicks.length).toBeGreaterThanOrEqual(10);
    expect(await edge.readLog(releaseId)).toMatch(/\[slipway\] taken over by a restarted runtime supervisor \(pid \d+\): still running as pid \d+/);

    // A crash of the adopted app is noticed and restarted (its ReleaseToRun came with the claim).
    const crashedAt = Date.now();
    await fetch(`http://127.0.0.1:${running.port}/crash`).catch(() => undefined);
    const reborn = await waitFor(() => loop!.samples.find((s) => s.at > crashedAt && s.status === 200 && s.body !== boot)?.body, {
      timeoutMs: 30_000,
      what: 'the crashed app to be restarted',
    });
    expect(reborn).not.toBe(boot);
    expect(await edge.readLog(releaseId)).toMatch(/\[slipway\] restarting in \d+ ms \(restart 1\)/);
    const [restarted] = await edge.list();
    expect(restarted!.pid).not.toBe(before!.pid);
    // The first-minute watch asks the release it got before the reconnect: the new supervisor
    // answers for it — the crash, the restart, the stderr line read through the FIFO, its cgroup's CPU.
    const report = await waitFor(
      async () => {
        const r = await running.report!();
        return r && r.restarts >= 1 && r.errorLines >= 1 ? r : undefined;
      },
      { timeoutMs: 10_000, what: "the crash in the release's report" },
    );
    expect(report).toMatchObject({ crashes: 1, restarts: 1, errorLines: 1, errorExcerpt: ['error: asked to crash'] });
    expect(report.cpuSeconds).toBeGreaterThan(0);
    expect(await alive(before!.pid!)).toBe(false);
    await loop.stop();

    // The launcher gone: the supervisor stops every app (in its cgroup) and exits; nothing is left.
    const releaseDir = join(runtimeDir, 'releases', releaseId);
    expect((await processesNaming(releaseDir)).length).toBeGreaterThan(0);
    edge.close();
    sleeper.kill('SIGKILL');
    await waitFor(() => second.child.exitCode !== null || undefined, { timeoutMs: 30_000, what: 'the supervisor to exit once the launcher is gone' });
    expect(await processesNaming(releaseDir)).toEqual([]);
    expect(cgroupDirs(releaseId)).toEqual([]);
    expect(JSON.parse(await readFile(join(stateDir, 'releases.json'), 'utf8')).releases).toEqual([]);
    expect((await readdir(stateDir)).filter((f) => f.startsWith(releaseId))).toEqual([]);
  }, 180_000);

  it('an app on a port of its own (not PORT): recorded with it, taken over with it, and restarted after a crash still routed to it', async () => {
    const first = startSupervisor();
    edge = await RemoteRuntimeDriver.connect(socketPath, runtimeDir, 30_000, () => undefined);
    const releaseId = randomUUID();
    // The shell's PORT is not the one the platform gave: the app listens on 3000 in its sandbox.
    const running = await edge.start({ ...spec(releaseId), startCommand: 'PORT=3000 node server.js' });
    expect(running.portFound).toEqual({ port: 3000, envPort: running.port });
    const boot = await (await fetch(`http://127.0.0.1:${running.port}/`)).text();
    expect(JSON.parse(await readFile(join(stateDir, 'releases.json'), 'utf8')).releases).toEqual([
      expect.objectContaining({ releaseId, port: running.port, appPort: 3000 }),
    ]);

    await killSupervisor(first);
    const second = startSupervisor();
    await second.waitForOutput(new RegExp(`release ${releaseId} adopted by the edge again`), 30_000);
    expect(await (await fetch(`http://127.0.0.1:${running.port}/`)).text()).toBe(boot);
    expect((await edge.list())[0]).toMatchObject({ releaseId, port: running.port, portFound: { port: 3000, envPort: running.port } });

    await fetch(`http://127.0.0.1:${running.port}/crash`).catch(() => undefined);
    const reborn = await waitFor(
      async () => {
        const body = await fetch(`http://127.0.0.1:${running.port}/`).then(
          (r) => r.text(),
          () => undefined,
        );
        return body && body !== boot ? body : undefined;
      },
      { timeoutMs: 30_000, what: 'the crashed app to answer again on its own port' },
    );
    expect(reborn).not.toBe(boot);
    expect(await edge.readLog(releaseId)).toMatch(/\[slipway\] restarting in \d+ ms \(restart 1\)/);
    await second.stop('SIGTERM');
  }, 120_000);

  it('a new supervisor cleans up a recorded release that is gone, and stops one nobody claims within the grace', async () => {
    const first = startSupervisor();
    edge = await RemoteRuntimeDriver.connect(socketPath, runtimeDir, 30_000, () => undefined);
    const [kept, gone] = [randomUUID(), randomUUID()];
    await edge.start(spec(kept));
    await edge.start(spec(gone));
    const pids = new Map((await edge.list()).map((r) => [r.releaseId, r.pid!]));
    await killSupervisor(first);
    edge.close(); // no edge will claim anything
    // One of the orphaned apps dies meanwhile (its sandbox's root process killed).
    process.kill(pids.get(gone)!, 'SIGKILL');
    await waitFor(async () => (await processesNaming(join(runtimeDir, 'releases', gone))).length === 0 || undefined, {
      timeoutMs: 10_000,
      what: 'the killed sandbox to be gone',
    });

    const second = startSupervisor();
    await second.waitForOutput(new RegExp(`1 recorded release\\(s\\) no longer running: cleaned up \\(${gone}\\)`), 30_000);
    expect(second.output()).toMatch(/took over 1 running release\(s\)/);
    expect(cgroupDirs(gone)).toEqual([]);
    expect((await readdir(stateDir)).filter((f) => f.startsWith(gone))).toEqual([]);
    expect(await alive(pids.get(kept)!)).toBe(true);

    // Nobody claims the other one: stopped once the grace (4 s here) has passed.
    await second.waitForOutput(new RegExp(`release ${kept} was not claimed by any edge within 4 s: stopping it`), 30_000);
    await waitFor(async () => ((await processesNaming(join(runtimeDir, 'releases', kept))).length === 0 && cgroupDirs(kept).length === 0) || undefined, {
      timeoutMs: 20_000,
      what: 'the unclaimed release to be stopped',
    });
    expect(await alive(pids.get(kept)!)).toBe(false);
    expect(JSON.parse(await readFile(join(stateDir, 'releases.json'), 'utf8')).releases).toEqual([]);
    await second.stop('SIGTERM');
  }, 120_000);
});
