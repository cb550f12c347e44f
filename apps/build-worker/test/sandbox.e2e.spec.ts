/**
 * The build sandbox from the attacker's seat: hostile projects deployed to the real worker process
 * (real pasta, bubblewrap, Postgres, Redis, npm registry).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployHarness, FIXTURES, freePort, waitFor } from '@slipway/testing';
import { projectTar } from './registry-platform.js';

/** Prints `PROBE <stage> <host:port> CONNECTED|<error code>` for each target, and never fails. */
function probeScript(targets: string[]): string {
  return `const net = require('net');
const stage = process.argv[2];
(async () => {
  for (const target of ${JSON.stringify(targets)}) {
    const i = target.lastIndexOf(':');
    await new Promise((done) => {
      const socket = net.connect(Number(target.slice(i + 1)), target.slice(0, i));
      socket.setTimeout(8000, () => { console.log('PROBE', stage, target, 'TIMEOUT'); socket.destroy(); done(); });
      socket.on('connect', () => { console.log('PROBE', stage, target, 'CONNECTED'); socket.destroy(); done(); });
      socket.on('error', (error) => { console.log('PROBE', stage, target, error.code); done(); });
    });
  }
})();
`;
}

describe('build sandbox end to end (real worker, pasta, bubblewrap)', () => {
  let h: DeployHarness;
  let platformPort: Server;
  let platformPortNumber: number;
  let accepted = 0;
  let edge: HttpServer;
  let edgeUrl: string;
  let fakeBin: string;

  beforeAll(async () => {
    h = await DeployHarness.create('worker-sandbox');
    // Stands in for the platform's own ports on the host's loopback (gateway, edge, auth…).
    platformPort = createServer((socket) => {
      accepted++;
      socket.end('platform\n');
    });
    await new Promise<void>((resolve) => platformPort.listen(0, '127.0.0.1', resolve));
    platformPortNumber = (platformPort.address() as { port: number }).port;
    // The edge's hand-off endpoint, for the Node deploy (the edge has its own tests).
    const edgePort = await freePort();
    edge = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"healthy"}'));
    await new Promise<void>((resolve) => edge.listen(edgePort, '127.0.0.1', resolve));
    edgeUrl = `http://127.0.0.1:${edgePort}`;
    fakeBin = await mkdtemp(join(tmpdir(), 'fake-bwrap-'));
    await chmod(fakeBin, 0o755);
  }, 60_000);

  afterAll(async () => {
    await h.close();
    platformPort.close();
    edge.close();
    await rm(fakeBin, { recursive: true, force: true });
  });

  afterEach(async () => {
    await h.stopWorkers();
  });

  it('preinstall, postinstall and build scripts reach the npm registry but not Redis, Postgres or the platform ports', async () => {
    await h.startWorker({ EDGE_INTERNAL_URL: edgeUrl });
    const hostTargets = ['127.0.0.1:6379', '127.0.0.1:5432', `127.0.0.1:${platformPortNumber}`];
    const lockfile = await readFile(join(FIXTURES, 'node-server', 'package-lock.json'), 'utf8');
    const pkg = {
      name: 'node-server-fixture',
      private: true,
      version: '1.0.0',
      scripts: {
        preinstall: 'node probe.cjs preinstall',
        postinstall: 'node probe.cjs postinstall',
        build: 'node probe.cjs build && mkdir -p dist && echo built > dist/index.html',
      },
      dependencies: { 'escape-html': '1.0.3' },
    };
    const source = await projectTar({
      'package.json': JSON.stringify(pkg, null, 2),
      'package-lock.json': lockfile,
      '.npmrc': 'foreground-scripts=true\n',
      'probe.cjs': probeScript([...hostTargets, 'registry.npmjs.org:443']),
    });
    const row = await h.waitForFinal(await h.deploy(await h.createApplication(), source), 180_000);
    expect(row.error).toBeNull();
    expect(row.status).toBe('succeeded');
    const logs = row.steps.map((s) => s.log).join('\n');
    for (const stage of ['preinstall', 'postinstall', 'build']) {
      for (const target of hostTargets) expect(logs).toMatch(new RegExp(`PROBE ${stage} ${target.replace(/\./g, '\\.')} (ECONNREFUSED|ENETUNREACH)`));
      expect(logs).toContain(`PROBE ${stage} registry.npmjs.org:443 CONNECTED`);
    }
    expect(logs).not.toMatch(/PROBE \S+ 127\.0\.0\.1:\d+ CONNECTED/);
    expect(accepted).toBe(0);
    expect(row.hazards.map((x) => x.code)).not.toContain('unsandboxed_build');
  }, 200_000);

  it('when bwrap cannot create namespaces, a deploy fails with sandbox_unavailable and nothing of it runs; fixing the machine needs no restart', async () => {
    const bwrap = join(fakeBin, 'bwrap');
    await writeFile(
      bwrap,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const worker = await h.startWorker({ PATH: `${fakeBin}:${process.env['PATH']}` });
    await worker.waitForOutput(/builds cannot be sandboxed here.*sandbox_unavailable/, 30_000);
    const marker = join(h.home, `ran-${Date.now()}`);
    await mkdir(h.home, { recursive: true });
    await chmod(h.home, 0o777); // so that even an unprivileged, unsandboxed build could leave its mark
    const build = `node -e "try { require('fs').writeFileSync('${marker}', 'ran') } catch {}" && mkdir -p dist && echo built > dist/index.html`;
    const source = await projectTar({ 'package.json': JSON.stringify({ name: 'marker', private: true, scripts: { build } }) });
    const appId = await h.createApplication();

    const failed = await h.waitForFinal(await h.deploy(appId, source));
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'sandbox_unavailable', step: 'build' } });
    expect(failed.error!.message).toMatch(/nothing of the project ran.*No permissions to create new namespace.*sysctl -w user\.max_user_namespaces=15000/);
    expect(failed.steps.map((s) => [s.name, s.status])).toEqual([
      ['receive', 'succeeded'],
      ['analyze', 'succeeded'],
      ['install', 'skipped'],
      ['build', 'failed'],
      ['scan', 'skipped'],
      ['package', 'skipped'],
      ['release', 'skipped'],
    ]);
    expect(existsSync(marker)).toBe(false);

    // The operator fixes the machine (here: a bwrap that works); the running worker notices.
    await writeFile(bwrap, '#!/bin/sh\nexec /usr/bin/bwrap "$@"\n', { mode: 0o755 });
    const fixed = await h.waitForFinal(await h.deploy(appId, source));
    expect(fixed.error).toBeNull();
    expect(fixed.status).toBe('succeeded');
    // It ran, in the sandbox: the host path it wrote to was not there.
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('BUILD_SANDBOX=off: every deploy carries unsandboxed_build, a Node app with nothing to install or build and a static site too', async () => {
    await h.startWorker({ BUILD_SANDBOX: 'off', EDGE_INTERNAL_URL: edgeUrl });
    const node = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'node-echo'));
    expect(node.status).toBe('succeeded');
    expect(node.steps.filter((s) => s.status === 'skipped').map((s) => s.name)).toEqual(['install', 'build']);
    expect(node.hazards).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'unsandboxed_build', detail: expect.stringContaining('BUILD_SANDBOX=off') })]),
    );
    const site = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'static-site'));
    expect(site.status).toBe('succeeded');
    expect(site.hazards.map((x) => x.code)).toEqual(['unsandboxed_build']);
  }, 120_000);

  it('build limits: what the build used is in its log and spec.buildResources; near the memory limit is a warning', async () => {
    await h.startWorker({ BUILD_MEMORY_MB: '512', EDGE_INTERNAL_URL: edgeUrl });
    const build =
      "node -e \"const a = []; for (let i = 0; i < 24; i++) a.push(Buffer.alloc(16 * 1024 * 1024, 1)); require('fs').mkdirSync('dist'); require('fs').writeFileSync('dist/index.html', 'held ' + a.length * 16)\"";
    const row = await h.waitForFinal(
      await h.deploy(
        await h.createApplication(),
        await projectTar({ 'package.json': JSON.stringify({ name: 'near-limit', private: true, scripts: { build } }) }),
      ),
      120_000,
    );
    expect({ status: row.status, error: row.error }).toEqual({ status: 'succeeded', error: null });
    expect(row.steps.find((s) => s.name === 'build')?.log).toMatch(
      /resources: peak memory \d+ MiB of 512 MiB \((8\d|9\d)%\), CPU [\d.]+ s, at most \d+ of 1024 tasks at once/,
    );
    expect(row.spec?.['buildResources']).toEqual([
      expect.objectContaining({ step: 'build', command: 'npm run build', memoryLimitBytes: 512 * 1024 * 1024, tasksLimit: 1024, limitHit: null }),
    ]);
    expect(row.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'build_memory_near_limit', detail: 'build' })]));
    expect(row.hazards.map((x) => x.code)).not.toContain('build_limits_rlimit_only');
  }, 180_000);

  it('BUILD_LIMITS=rlimit (the operator said so): every deploy carries build_limits_rlimit_only', async () => {
    await h.startWorker({ BUILD_LIMITS: 'rlimit', EDGE_INTERNAL_URL: edgeUrl });
    const site = await h.waitForFinal(await h.deployFixture(await h.createApplication(), 'static-site'));
    expect(site.status).toBe('succeeded');
    expect(site.hazards).toEqual([expect.objectContaining({ code: 'build_limits_rlimit_only', detail: 'BUILD_LIMITS=rlimit' })]);
  }, 120_000);

  it('a build still running when the worker is killed (-9) dies with it', async () => {
    const worker = await h.startWorker();
    const running = () => execFileSync('sh', ['-c', 'pgrep -f "sleep 424[3]" || true'], { encoding: 'utf8' }).trim();
    const source = await projectTar({ 'package.json': JSON.stringify({ name: 'sleeper', private: true, scripts: { build: 'sleep 4243' } }) });
    await h.deploy(await h.createApplication(), source);
    await waitFor(() => running() !== '', { timeoutMs: 60_000, what: 'the build to be running' });
    process.kill(worker.child.pid!, 'SIGKILL');
    await worker.exited;
    await waitFor(() => running() === '', { timeoutMs: 10_000, what: 'the sandboxed build (pasta, bwrap, sleep) to be gone' });
    expect(running()).toBe('');
  }, 120_000);
});
