import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { LocalSandbox, removeAppUser } from '@slipway/sandbox';
import { LocalDriver, type RunningRelease } from '../src/index.js';
import { CONNECT_HELPER, appArtifact, secretListener } from './sandbox-apps.js';

const run = promisify(execFile);

/**
 * The runtime sandbox from the tenant's side: a real app, started by the local driver in the
 * real sandbox (its own user, bubblewrap, pasta, cgroups), reports what it can see and reach.
 * Needs root (the edge's embedded default), bubblewrap and pasta — `.ci/run` installs them.
 */
const PROBE_APP = `
const http = require('node:http');
const fs = require('node:fs');
const { execSync } = require('node:child_process');
const tryRead = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return 'ERR ' + e.code; } };
${CONNECT_HELPER}http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/probe') {
    const status = tryRead('/proc/self/status');
    const field = (k) => (status.match(new RegExp('^' + k + ':\\\\s*(.*)$', 'm')) || [])[1];
    const pids = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n));
    const targets = JSON.parse(url.searchParams.get('connect') || '[]');
    const reach = {};
    for (const [h, p] of targets) reach[h + ':' + p] = await connect(h, p);
    const files = {};
    for (const f of JSON.parse(url.searchParams.get('read') || '[]')) files[f] = tryRead(f).slice(0, 200);
    let writeApp;
    try { fs.writeFileSync('/app/written', 'x'); writeApp = 'written'; } catch (e) { writeApp = e.code; }
    let tmpBig;
    try { execSync('head -c 80M /dev/zero > /tmp/big', { stdio: 'pipe' }); tmpBig = 'written'; } catch (e) { tmpBig = 'refused'; }
    try { fs.unlinkSync('/tmp/big'); } catch {}
    res.setHeader('content-type', 'application/json');
    return res.end(JSON.stringify({
      uid: field('Uid'), gid: field('Gid'), noNewPrivs: field('NoNewPrivs'), capEff: field('CapEff'), capBnd: field('CapBnd'),
      pids, cmdlines: pids.map((p) => tryRead('/proc/' + p + '/cmdline').replace(/\\0/g, ' ')),
      env: process.env, reach, files, writeApp, tmpBig, hostname: require('node:os').hostname(),
    }));
  }
  if (url.pathname === '/balloon') {
    const chunks = [];
    try { for (let i = 0; i < 64; i++) chunks.push(Buffer.alloc(64 * 1024 * 1024, 1)); } catch (e) { return res.end('refused ' + e.message); }
    return res.end('allocated ' + chunks.length * 64 + ' MiB');
  }
  if (url.pathname === '/forkbomb') {
    let made = 0, error = '';
    const deadline = Date.now() + 5000;
    while (made < 2000 && Date.now() < deadline) {
      try { require('node:child_process').spawn('sleep', ['30'], { stdio: 'ignore', detached: true }).on('error', (e) => { error = e.code; }); made++; } catch (e) { error = e.code; break; }
    }
    await new Promise((r) => setTimeout(r, 500));
    let running = 0;
    try { running = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).length; } catch {}
    return res.end(JSON.stringify({ made, running, error }));
  }
  res.end('hello from ' + process.env.APP_NAME);
}).listen(Number(process.env.PORT));
`;

const artifact = (dir: string, blobs: BlobStore, key: string) => appArtifact(dir, blobs, key, PROBE_APP);

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(20_000) });
  return { status: response.status, text: await response.text() };
}

const listener = secretListener;

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('the local runtime sandbox, probed from inside an app', () => {
  let home: string;
  let blobs: BlobStore;
  let driver: LocalDriver;
  let platform: Server;
  let allowed: Server;
  const running: RunningRelease[] = [];
  const appA = randomUUID();
  const appB = randomUUID();
  let a: RunningRelease;
  let b: RunningRelease;
  const hostAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-runtime-sandbox-'));
    await chmod(home, 0o711); // like any SLIPWAY_HOME: traversable, not listable
    await writeFile(join(home, 'master.key'), 'the-master-key', { mode: 0o600 });
    blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
    platform = await listener('0.0.0.0');
    allowed = await listener('127.0.0.1');
    const sandbox = new LocalSandbox({
      limits: { memoryBytes: 256 << 20, pids: 64, cpus: 0.5 },
      tmpBytes: 16 << 20,
      hostPorts: [(allowed.address() as { port: number }).port],
    });
    driver = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 20_000, sandbox });
    await artifact(join(home, 'src'), blobs, 'releases/probe.tar.gz');
    const start = async (applicationId: string, name: string) => {
      const release = await driver
        .start({
          releaseId: randomUUID(),
          applicationId,
          slug: name,
          artifactKey: 'releases/probe.tar.gz',
          startCommand: 'npm start',
          env: { APP_NAME: name, SECRET: `secret-of-${name}` },
        })
        .catch((error: Error & { logTail?: string }) => Promise.reject(new Error(`${error.message}\n${error.logTail ?? ''}`)));
      running.push(release);
      return release;
    };
    [a, b] = [await start(appA, 'a'), await start(appB, 'b')];
  }, 90_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.stop(2000)));
    await new Promise((r) => platform?.close(r));
    await new Promise((r) => allowed?.close(r));
    await rm(home, { recursive: true, force: true });
    await Promise.all([removeAppUser(appA), removeAppUser(appB)]);
  });

  const probe = async (release: RunningRelease, connect: [string, number][] = [], read: string[] = []) => {
    const reply = await get(release.port, `/probe?connect=${encodeURIComponent(JSON.stringify(connect))}&read=${encodeURIComponent(JSON.stringify(read))}`);
    expect(reply.status).toBe(200);
    return JSON.parse(reply.text) as Record<string, any>;
  };

  it('runs each app as a user of its own, with no privileges and no way to gain any', async () => {
    const [pa, pb] = [await probe(a), await probe(b)];
    const uidA = Number(String(pa.uid).split(/\s+/)[0]);
    const uidB = Number(String(pb.uid).split(/\s+/)[0]);
    expect(uidA).toBeGreaterThan(0);
    expect(uidB).toBeGreaterThan(0);
    expect(uidA).not.toBe(uidB);
    expect(pa.noNewPrivs).toBe('1');
    expect(pa.capEff).toBe('0000000000000000');
    expect(pa.capBnd).toBe('0000000000000000');
    const { stdout } = await run('getent', ['passwd', String(uidA)]);
    expect(stdout).toContain(`slipway app ${appA}`);
  });

  it('shows an app only its own processes and only its declared environment', async () => {
    const pa = await probe(a);
    expect(pa.cmdlines.join('\n')).not.toMatch(/jest|secret-of-b|postgres|redis/);
    expect(pa.pids.length).toBeLessThan(10);
    expect(Object.keys(pa.env).sort()).toEqual(expect.arrayContaining(['APP_NAME', 'PORT', 'SECRET']));
    expect(pa.env.SECRET).toBe('secret-of-a');
    expect(JSON.stringify(pa)).not.toContain('secret-of-b');
    expect(pa.env).not.toHaveProperty('SLIPWAY_MASTER_KEY');
    expect(pa.env).not.toHaveProperty('JEST_WORKER_ID');
  });

  it('keeps the secrets off every command line on the host', async () => {
    const { stdout } = await run('ps', ['-eo', 'args']);
    expect(stdout).not.toContain('secret-of-a');
    expect(stdout).toContain('bwrap');
  });

  it('hides the host: nothing of the platform home, the release read-only, /tmp bounded', async () => {
    const pa = await probe(
      a,
      [],
      [join(home, 'master.key'), '/etc/shadow', `${driver.releaseDir(b.releaseId)}/server.js`, '/app/server.js', '/proc/1/environ'],
    );
    expect(pa.files[join(home, 'master.key')]).toMatch(/^ERR/);
    expect(pa.files['/etc/shadow']).toMatch(/^ERR/);
    expect(pa.files[`${driver.releaseDir(b.releaseId)}/server.js`]).toMatch(/^ERR/);
    expect(pa.files['/app/server.js']).toContain("require('node:http')");
    expect(pa.writeApp).toBe('EROFS');
    expect(pa.tmpBig).toBe('refused');
  });

  it('reaches only the allowed host ports; the app itself only through its forwarded loopback port', async () => {
    const allowedPort = (allowed.address() as { port: number }).port;
    const platformPort = (platform.address() as { port: number }).port;
    const targets: [string, number][] = [
      ['127.0.0.1', allowedPort],
      ['127.0.0.1', platformPort],
      ['127.0.0.1', 6379],
      ['127.0.0.1', 5432],
      ['127.0.0.1', b.port],
    ];
    if (hostAddress) targets.push([hostAddress, platformPort]);
    const pa = await probe(a, targets);
    expect(pa.reach[`127.0.0.1:${allowedPort}`]).toBe('open');
    for (const [host, port] of targets.slice(1, 5)) expect([`${host}:${port}`, pa.reach[`${host}:${port}`]]).toEqual([`${host}:${port}`, 'ECONNREFUSED']);
    if (hostAddress) expect(pa.reach[`${hostAddress}:${platformPort}`]).not.toBe('open');
    // From the host, the app answers on loopback only.
    if (hostAddress) await expect(fetch(`http://${hostAddress}:${a.port}/`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });

  /** Polls B (the neighbour) every 100 ms while `attack` runs; the failures it saw. */
  async function neighbourFailures<T>(attack: Promise<T>): Promise<{ failures: number; polls: number; outcome: T }> {
    let done = false;
    const outcome = attack.finally(() => (done = true));
    let failures = 0;
    let polls = 0;
    while ((!done || polls < 10) && polls < 200) {
      polls++;
      if ((await get(b.port, '/').catch(() => ({ text: '' }))).text !== 'hello from b') failures++;
      await new Promise((r) => setTimeout(r, 100));
    }
    return { failures, polls, outcome: await outcome };
  }

  it('bounds memory: a 4 GiB balloon ends in its own cgroup and the neighbour keeps answering', async () => {
    const { failures, outcome } = await neighbourFailures(
      get(a.port, '/balloon').catch((error: Error) => ({ status: 0, text: `connection lost (${error.message})` })),
    );
    expect(failures).toBe(0);
    expect(outcome.text).not.toMatch(/^allocated/);
    // The driver restarts the killed app by itself.
    for (
      let i = 0;
      i < 100 &&
      !(await get(a.port, '/').then(
        (r) => r.text === 'hello from a',
        () => false,
      ));
      i++
    )
      await new Promise((r) => setTimeout(r, 200));
    expect((await get(a.port, '/')).text).toBe('hello from a');
  }, 60_000);

  it('bounds processes: a fork bomb stops at the limit and the neighbour keeps answering', async () => {
    const { failures, outcome } = await neighbourFailures(get(a.port, '/forkbomb'));
    expect(failures).toBe(0);
    const report = JSON.parse(outcome.text) as { made: number; running: number; error: string };
    expect(report.running).toBeLessThanOrEqual(64);
    expect(report.error).toBe('EAGAIN');
  }, 60_000);
});
