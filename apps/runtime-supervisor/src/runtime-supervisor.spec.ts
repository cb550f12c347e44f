/**
 * The runtime supervisor and the edge's RemoteRuntimeDriver over a real Unix socket. The driver
 * behind the supervisor is a stand-in that runs a real HTTP server per release (the sandbox itself
 * is exercised by `nx test edge`'s runtime-sandbox suite and by pnpm test:faults): what is tested
 * here is the protocol — adoption by a second edge, errors keeping their class, the socket's
 * permissions, and that releases nobody claims are stopped.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteRuntimeDriver } from '@slipway/data-plane';
import { UnhealthyReleaseError, type ReleaseToRun, type RunningRelease, type RuntimeDriver } from '@slipway/runtime';
import { SandboxUnavailableError } from '@slipway/sandbox';
import { waitFor } from '@slipway/testing';
import { RuntimeSupervisor } from './runtime-supervisor.js';

class HttpReleases implements RuntimeDriver {
  readonly name = 'local' as const;
  readonly started: string[] = [];
  readonly stopped: string[] = [];
  async start(release: ReleaseToRun): Promise<RunningRelease> {
    if (release.startCommand === 'unhealthy') throw new UnhealthyReleaseError('the release exited (1) before it answered HTTP on PORT', 'Error: boom\n');
    if (release.startCommand === 'no-sandbox') throw new SandboxUnavailableError('bubblewrap (bwrap) is not installed: run `apt-get install -y bubblewrap`');
    this.started.push(release.releaseId);
    const server: Server = createServer((_req, res) => res.end(release.releaseId));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return {
      releaseId: release.releaseId,
      host: '127.0.0.1',
      port: (server.address() as { port: number }).port,
      logTail: () => '',
      stop: async () => {
        this.stopped.push(release.releaseId);
        await new Promise((ok) => server.close(ok));
      },
    };
  }
}

const release = (releaseId: string, startCommand = 'npm start'): ReleaseToRun => ({
  releaseId,
  applicationId: `app-${releaseId}`,
  slug: releaseId,
  artifactKey: `releases/${releaseId}.tar.gz`,
  startCommand,
  env: { SECRET: 's3cr3t' },
});

describe('runtime supervisor ↔ edge', () => {
  let dir: string;
  let driver: HttpReleases;
  let supervisor: RuntimeSupervisor;
  let socketPath: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-supervisor-'));
    socketPath = join(dir, 'supervisor', 'runtime.sock');
    driver = new HttpReleases();
    supervisor = new RuntimeSupervisor(driver, { socketPath, adoptGraceMs: 300 });
    await supervisor.listen();
  });
  afterEach(async () => {
    await supervisor.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a second edge gets the running release back at once (adoption); only the platform user may open the socket', async () => {
    expect((await stat(join(dir, 'supervisor'))).mode & 0o777).toBe(0o700);
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);

    let lost = '';
    const first = await RemoteRuntimeDriver.connect(socketPath, dir, 2000, (reason) => (lost = reason));
    const running = await first.start(release('r1'));
    expect(await fetch(`http://127.0.0.1:${running.port}/`).then((r) => r.text())).toBe('r1');
    first.close(); // the edge went away (as a crash would close its socket)

    const second = await RemoteRuntimeDriver.connect(socketPath, dir, 2000, () => undefined);
    const adopted = await second.start(release('r1'));
    expect(adopted.port).toBe(running.port);
    expect(driver.started).toEqual(['r1']);
    expect(await second.list()).toEqual([{ releaseId: 'r1', applicationId: 'app-r1', host: '127.0.0.1', port: running.port }]);
    // Past the grace period the adopted release is still running: it was claimed again.
    await new Promise((r) => setTimeout(r, 800));
    expect(driver.stopped).toEqual([]);
    await adopted.stop();
    expect(driver.stopped).toEqual(['r1']);
    second.close();
    expect(lost).toBe('');
  });

  it("keeps the errors' kind across the socket: unhealthy (with its log tail) and sandbox_unavailable", async () => {
    const edge = await RemoteRuntimeDriver.connect(socketPath, dir, 2000, () => undefined);
    const unhealthy = await edge.start(release('bad', 'unhealthy')).catch((e: unknown) => e);
    expect(unhealthy).toBeInstanceOf(UnhealthyReleaseError);
    expect(unhealthy).toMatchObject({ message: 'the release exited (1) before it answered HTTP on PORT', logTail: 'Error: boom\n' });
    const sandbox = await edge.start(release('nosb', 'no-sandbox')).catch((e: unknown) => e);
    expect(sandbox).toBeInstanceOf(SandboxUnavailableError);
    expect(sandbox).toMatchObject({ code: 'sandbox_unavailable', message: expect.stringMatching(/bubblewrap/) });
    // A failed start leaves nothing held: starting it again runs the driver again.
    await expect(edge.start(release('bad', 'unhealthy'))).rejects.toBeInstanceOf(UnhealthyReleaseError);
    expect(await edge.list()).toEqual([]);
    edge.close();
  });

  it('stops a release no edge claims within the grace period after its edge went away', async () => {
    const edge = await RemoteRuntimeDriver.connect(socketPath, dir, 2000, () => undefined);
    await edge.start(release('orphan'));
    edge.close();
    await waitFor(() => driver.stopped.includes('orphan'), { timeoutMs: 10_000, what: 'the unclaimed release to be stopped' });
    expect(driver.stopped).toEqual(['orphan']);
  });

  it('tells the edge when the supervisor is gone for good: none answers within the timeout (the edge then exits, and its restart starts the apps anew)', async () => {
    let lost = '';
    let lostAt = 0;
    await RemoteRuntimeDriver.connect(socketPath, dir, 1000, (reason) => ((lost = reason), (lostAt = Date.now())));
    const closedAt = Date.now();
    await supervisor.close();
    await waitFor(() => lost || undefined, { timeoutMs: 10_000, what: 'the edge to be told' });
    expect(lost).toMatch(/^no runtime supervisor answered within 1 s after the connection closed/);
    // It tried to reconnect for its whole timeout first (a restarted supervisor would have been claimed).
    expect(lostAt - closedAt).toBeGreaterThanOrEqual(900);
  });
});
