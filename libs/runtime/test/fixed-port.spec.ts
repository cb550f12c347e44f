import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { LocalSandbox, removeAppUser } from '@slipway/sandbox';
import { freePort, waitFor } from '@slipway/testing';
import { LocalDriver, UnhealthyReleaseError, type ReleaseToRun, type RunningRelease } from '../src/index.js';

const run = promisify(execFile);

/**
 * Apps that ignore PORT, started by the local driver in the real sandbox (bubblewrap, pasta,
 * cgroups) and unsandboxed: listening on one port of their own they are found and routed to; on
 * two, or on none, they fail with a message naming what was tried and found. Needs root, bwrap
 * and pasta (as local-sandbox.spec.ts).
 *
 * The app listens on each port of `LISTEN` (none: on nothing at all), never on PORT, answers its
 * boot id and the port it was reached on, and exits on /crash.
 */
const APP = `
const http = require('node:http');
const boot = require('node:crypto').randomUUID();
const ports = (process.env.LISTEN || '').split(',').filter(Boolean).map(Number);
console.log('booted ' + boot);
for (const port of ports) {
  http.createServer((req, res) => {
    if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(3), 20); return; }
    res.end(JSON.stringify({ boot, port, PORT: process.env.PORT }));
  }).listen(port);
}
if (ports.length === 0) setInterval(() => undefined, 1000);
`;

interface Answer {
  boot: string;
  port: number;
  PORT: string;
}

async function answer(release: RunningRelease, path = '/'): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${release.port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return (await response.json()) as Answer;
}

function hostListener(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end('platform\n'));
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as { port: number }).port;
const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('apps that ignore PORT', () => {
  let home: string;
  let blobs: BlobStore;
  /** A platform port every sandbox reaches at 127.0.0.1 (as the platform API's is in a local install). */
  let platformPort: Server;
  let sandbox: LocalSandbox;
  let sandboxed: LocalDriver;
  let unsandboxed: LocalDriver;
  const running: RunningRelease[] = [];
  const apps: string[] = [];

  const spec = (env: Record<string, string>, extra: Partial<ReleaseToRun> = {}): ReleaseToRun => {
    const applicationId = randomUUID();
    apps.push(applicationId);
    return { releaseId: randomUUID(), applicationId, slug: 'fixed', artifactKey: 'releases/fixed.tar.gz', startCommand: 'node server.js', env, ...extra };
  };
  const start = async (driver: LocalDriver, release: ReleaseToRun): Promise<RunningRelease> => {
    const started = await driver
      .start(release)
      .catch((error: Error & { logTail?: string }) => Promise.reject(new Error(`${error.message}\n${error.logTail ?? ''}`)));
    running.push(started);
    return started;
  };
  const boots = async (driver: LocalDriver, releaseId: string) => ((await driver.readLog(releaseId)) ?? '').match(/stdout booted /g)?.length ?? 0;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-fixed-port-'));
    await chmod(home, 0o711);
    blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
    platformPort = await hostListener();
    sandbox = new LocalSandbox({ limits: { memoryBytes: 256 << 20, pids: 64, cpus: 0.5 }, tmpBytes: 16 << 20, hostPorts: [portOf(platformPort)] });
    sandboxed = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 20_000, sandbox, backoffMs: 200 });
    unsandboxed = new LocalDriver({ blobs, dir: join(home, 'runtime-unsandboxed'), healthTimeoutMs: 20_000 });
    const src = join(home, 'src');
    await mkdir(src);
    await writeFile(join(src, 'server.js'), APP);
    await writeFile(join(src, 'package.json'), JSON.stringify({ name: 'fixed', private: true }));
    await run('tar', ['-czf', join(home, 'fixed.tar.gz'), '-C', src, 'server.js', 'package.json']);
    await blobs.put('releases/fixed.tar.gz', createReadStream(join(home, 'fixed.tar.gz')));
  });

  afterAll(async () => {
    await Promise.all(running.map((r) => r.stop(2000)));
    await new Promise((r) => platformPort?.close(r));
    await rm(home, { recursive: true, force: true });
    await Promise.all(apps.map((id) => removeAppUser(id)));
  });

  it("an app on a fixed 3000 is found in its sandbox, routed to through its PORT's host port, and stays so across a crash restart", async () => {
    const release = spec({ LISTEN: '3000' });
    const started = await start(sandboxed, release);
    const first = await answer(started);
    expect(first).toMatchObject({ port: 3000, PORT: String(started.port) });
    expect(started.portFound).toEqual({ port: 3000, envPort: started.port });
    const log = (await sandboxed.readLog(release.releaseId)) ?? '';
    expect(log).toContain(`[slipway] the app listens on 3000, not on PORT (${started.port}): routed to 3000`);
    // Found only once it listened: its sandbox started again, forwarding PORT's host port to 3000.
    expect(log).toContain(`starting it again with port ${started.port} forwarded to 3000 in its sandbox`);
    expect(await boots(sandboxed, release.releaseId)).toBe(2);

    await fetch(`http://127.0.0.1:${started.port}/crash`).catch(() => undefined);
    const again = await waitFor(
      async () => {
        const reply = await answer(started).catch(() => undefined);
        return reply && reply.boot !== first.boot ? reply : undefined;
      },
      { timeoutMs: 30_000, what: 'the crashed app to answer again' },
    );
    expect(again.port).toBe(3000);
    expect((await sandboxed.readLog(release.releaseId)) ?? '').toMatch(/\[slipway\] restarting in \d+ ms \(restart 1\)/);
  }, 90_000);

  it('starts routed to the port the analyzer found, even one a platform port would take in the sandbox: one start, no restart', async () => {
    const taken = portOf(platformPort);
    const release = spec({ LISTEN: String(taken) }, { fixedPort: taken });
    const started = await start(sandboxed, release);
    expect(await answer(started)).toMatchObject({ port: taken });
    expect(started.portFound).toEqual({ port: taken, envPort: started.port });
    expect(await boots(sandboxed, release.releaseId)).toBe(1);
    expect((await sandboxed.readLog(release.releaseId)) ?? '').not.toContain('starting it again');
  }, 60_000);

  it('a port a platform port took in its sandbox, the analyzer not knowing: EADDRINUSE, then started again with that port its own', async () => {
    const taken = portOf(platformPort);
    const release = spec({ LISTEN: String(taken) });
    const started = await start(sandboxed, release);
    expect(await answer(started)).toMatchObject({ port: taken });
    expect(started.portFound).toEqual({ port: taken, envPort: started.port });
    const log = (await sandboxed.readLog(release.releaseId)) ?? '';
    expect(log).toContain(`EADDRINUSE`);
    expect(log).toContain(
      `[slipway] the app could not listen on ${taken}: in its sandbox that port led to the platform's own: starting it again with port ${started.port} forwarded to ${taken} in its sandbox`,
    );
  }, 60_000);

  it("an analyzer's port the app does not listen on after all: routed back to PORT", async () => {
    const release = spec({ LISTEN: '' }, { fixedPort: 3000, startCommand: 'LISTEN=$PORT node server.js' });
    const started = await start(sandboxed, release);
    expect(await answer(started)).toMatchObject({ port: started.port });
    expect(started.portFound).toBeUndefined();
  }, 60_000);

  it('two ports other than PORT, or none at all: unhealthy, saying what was tried and found', async () => {
    const driver = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 12_000, sandbox });
    const [two, none] = await Promise.all([
      driver.start(spec({ LISTEN: '3001,3002' })).then(
        () => undefined,
        (error: unknown) => error,
      ),
      driver.start(spec({ LISTEN: '' })).then(
        () => undefined,
        (error: unknown) => error,
      ),
    ]);
    expect(two).toBeInstanceOf(UnhealthyReleaseError);
    expect((two as Error).message).toMatch(
      /^the release did not answer HTTP on PORT \d+ within 12 s: it listens on 3001, 3002, none of them PORT, and the platform routes to a port other than PORT only when it is the only one$/,
    );
    expect(none).toBeInstanceOf(UnhealthyReleaseError);
    // pasta's own listener in the sandbox (the platform port it forwards) is not the app's.
    expect((none as Error).message).toMatch(
      /^the release did not answer HTTP within 12 s: it was given PORT=\d+, and no listening TCP port was found in its sandbox$/,
    );
  }, 60_000);

  it("unsandboxed: routed to the port its own processes listen on, never to another process's", async () => {
    const own = await freePort();
    const started = await start(unsandboxed, spec({ LISTEN: String(own) }));
    expect(started.port).toBe(own);
    expect(started.portFound).toMatchObject({ port: own });
    expect(await answer(started)).toMatchObject({ port: own });

    const driver = new LocalDriver({ blobs, dir: join(home, 'runtime-unsandboxed'), healthTimeoutMs: 8_000 });
    // The host is full of listeners (this one among them): none of them is the app's.
    const error = await driver.start(spec({ LISTEN: '' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(
      /^the release did not answer HTTP within 8 s: it was given PORT=\d+, and no listening TCP port was found among its processes$/,
    );
  }, 60_000);
});
