/**
 * NodeApps with the real runtimes the edge runs apps on: the local driver (sandboxed, as by
 * default, and unsandboxed) and the runtime supervisor (the built process, over its real Unix
 * socket, sandboxing as the local driver does). A release asked for again while it still drains —
 * a rollback just after a deploy — must not be stopped by that drain, nor run twice. The sandboxed
 * runtimes need root, bwrap and pasta (as runtime-adopt.spec.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@slipway/blob';
import { SERVICE_ENTRIES } from '@slipway/config';
import { RemoteRuntimeDriver } from '@slipway/data-plane';
import { LocalDriver, type ReleaseToRun, type RuntimeDriver } from '@slipway/runtime';
import { LocalSandbox, removeAppUser } from '@slipway/sandbox';
import { ROOT, startProcess } from '@slipway/testing';
import type { Upstream } from '../proxy/proxy.js';
import { NodeApps } from './node-apps.js';

/**
 * Says which process answers (a boot id per start, also in its log) and its VERSION; `/slow` is
 * answered only once `/release` is asked (at most after two minutes).
 */
const APP = `
const boot = require('node:crypto').randomUUID();
console.log('booted ' + boot);
const held = [];
require('node:http').createServer((req, res) => {
  if (req.url === '/slow') {
    held.push(res);
    setTimeout(() => res.end('late'), 120000).unref();
    return;
  }
  if (req.url === '/release') {
    for (const r of held.splice(0)) r.end('slow done');
    return res.end('released');
  }
  res.end(JSON.stringify({ boot, version: process.env.VERSION }));
}).listen(Number(process.env.PORT));
`;

/** How long a drain waits for requests still in flight before it stops the old process. */
const GRACE_MS = 4000;

interface Runtime {
  driver: RuntimeDriver;
  readLog(releaseId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

interface Answer {
  boot: string;
  version: string;
}

async function answer(upstream: Upstream | undefined, path = '/'): Promise<{ status: number; body: string }> {
  if (!upstream) return { status: 502, body: 'no upstream' };
  try {
    const response = await fetch(`http://${upstream.host}:${upstream.port}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    // What the edge's proxy answers when the process behind the route is gone.
    return { status: 502, body: (error as Error).message };
  }
}

async function json(upstream: Upstream | undefined): Promise<Answer> {
  const { status, body } = await answer(upstream);
  if (status !== 200) throw new Error(`answered ${status}: ${body}`);
  return JSON.parse(body) as Answer;
}

/** A request in flight through the route, counted as the edge's proxy counts it (the drain waits for it). */
function inFlight(upstream: Upstream): { settled: () => boolean; answer: Promise<{ status: number; body: string }> } {
  let settled = false;
  upstream.enter();
  const reply = answer(upstream, '/slow').finally(() => {
    settled = true;
    upstream.leave();
  });
  return { settled: () => settled, answer: reply };
}

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;
const sandboxed = (): LocalSandbox => new LocalSandbox({ limits: { memoryBytes: 256 << 20, pids: 64, cpus: 0.5 }, tmpBytes: 16 << 20, hostPorts: [] });

const runtimes: [string, (home: string, blobs: BlobStore) => Promise<Runtime>, typeof describe][] = [
  [
    'the local driver, sandboxed',
    async (home, blobs) => {
      const driver = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 20_000, sandbox: sandboxed() });
      return { driver, readLog: (id) => driver.readLog(id), close: async () => undefined };
    },
    rootOnly,
  ],
  [
    'the local driver, unsandboxed',
    async (home, blobs) => {
      const driver = new LocalDriver({ blobs, dir: join(home, 'runtime'), healthTimeoutMs: 20_000 });
      return { driver, readLog: (id) => driver.readLog(id), close: async () => undefined };
    },
    describe,
  ],
  [
    'the runtime supervisor',
    async (home) => {
      const socketPath = join(home, 'supervisor', 'runtime.sock');
      // The built supervisor (apps/runtime-supervisor; `nx test edge` builds it), sandboxing as the
      // local driver above does (the same limits, pasta), its state under `<home>/runtime`.
      const supervisor = startProcess(process.execPath, [join(ROOT, SERVICE_ENTRIES.runtime)], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'],
          HOME: process.env['HOME'],
          NO_COLOR: '1',
          SLIPWAY_HOME: home,
          BLOB_DIR: join(home, 'blobs'),
          RUNTIME_SUPERVISOR_SOCKET: socketPath,
          RUNTIME_ADOPT_GRACE_MS: '60000',
          HEALTH_TIMEOUT_MS: '20000',
          RUNTIME_MEMORY_MB: '256',
          RUNTIME_PIDS: '64',
          RUNTIME_CPUS: '0.5',
          RUNTIME_TMP_MB: '16',
          RUNTIME_NETWORK: 'pasta',
        },
      });
      const driver = await RemoteRuntimeDriver.connect(socketPath, join(home, 'runtime'), 30_000, () => undefined);
      return {
        driver,
        readLog: (id) => driver.readLog(id),
        close: async () => {
          driver.close();
          await supervisor.stop('SIGTERM', 15_000);
        },
      };
    },
    rootOnly,
  ],
];

for (const [name, open, suite] of runtimes) {
  suite(`NodeApps on ${name}: a release asked for again while it drains`, () => {
    let home: string;
    let runtime: Runtime;
    let apps: NodeApps | undefined;
    const applicationId = randomUUID();
    /** Each release's environment as the edge would describe it now (a test changes one to change it). */
    const env = new Map<string, Record<string, string>>();
    const events: string[] = [];

    const describeRelease = async (releaseId: string): Promise<ReleaseToRun> => ({
      releaseId,
      applicationId,
      slug: 'drain',
      artifactKey: 'releases/app.tar.gz',
      startCommand: 'node server.js',
      env: { ...env.get(releaseId)! },
    });
    /** The release as the edge hands it to NodeApps (its application's route with it). */
    const to = (releaseId: string) => ({ applicationId, release: { id: releaseId } });
    const boots = async (releaseId: string) => ((await runtime.readLog(releaseId)) ?? '').match(/booted /g)?.length ?? 0;
    const release = (version: string): string => {
      const id = randomUUID();
      env.set(id, { VERSION: version });
      return id;
    };

    beforeAll(async () => {
      home = await mkdtemp(join(tmpdir(), 'slipway-node-apps-'));
      await chmod(home, 0o711);
      const src = join(home, 'src');
      await mkdir(src);
      await writeFile(join(src, 'server.js'), APP);
      await writeFile(join(src, 'package.json'), JSON.stringify({ name: 'drain', private: true }));
      execFileSync('tar', ['-czf', join(home, 'app.tar.gz'), '-C', src, 'server.js', 'package.json']);
      const blobs = createBlobStore({ BLOB_DIR: join(home, 'blobs') });
      await blobs.put('releases/app.tar.gz', createReadStream(join(home, 'app.tar.gz')));
      runtime = await open(home, blobs);
    });

    beforeEach(() => {
      events.length = 0;
      apps = new NodeApps(
        runtime.driver,
        GRACE_MS,
        ({ release: { id } }) => describeRelease(id),
        (stopped) => events.push(`stopped ${stopped.releaseId}`),
      );
    });

    afterEach(async () => {
      await apps?.stopAll();
    });

    afterAll(async () => {
      await runtime?.close();
      await removeAppUser(applicationId).catch(() => undefined);
      await rm(home, { recursive: true, force: true });
    });

    it('rolled back to while a slow request holds its drain: the same process serves again, past the grace, and it never runs twice', async () => {
      const x = release('x');
      const y = release('y');
      await apps!.activate(to(x));
      const first = await json(apps!.upstream(applicationId));
      expect(first.version).toBe('x');
      const routedToX = apps!.upstream(applicationId)!;
      const slow = inFlight(routedToX);

      await apps!.activate(to(y));
      expect((await json(apps!.upstream(applicationId))).version).toBe('y');
      // X drains (its slow request holds it, up to the grace period): still running.
      expect(slow.settled()).toBe(false);

      await apps!.activate(to(x));
      // Past the grace of the drain that began at the deploy of Y, X still answers: the same process.
      const until = Date.now() + GRACE_MS + 3000;
      const answers: { status: number; body: string }[] = [];
      while (Date.now() < until && answers.length < 200) {
        answers.push(await answer(apps!.upstream(applicationId)));
        await new Promise((r) => setTimeout(r, 50));
      }
      const other = answers.filter((a) => a.status !== 200 || a.body !== JSON.stringify(first));
      expect({ other: other.length, sample: other.slice(0, 2) }).toEqual({ other: 0, sample: [] });
      expect(answers.length).toBeGreaterThan(10);
      expect(apps!.upstream(applicationId)!.port).toBe(routedToX.port);
      // The request in flight across the rollback is answered too.
      await answer(apps!.upstream(applicationId), '/release');
      expect(await slow.answer).toEqual({ status: 200, body: 'slow done' });
      expect(await boots(x)).toBe(1);
      // Y drained and stopped; X never was.
      expect(events).toEqual([`stopped ${y}`]);
    }, 90_000);

    it('asked back with another environment: it starts afresh once its drain is over (never beside the draining process), the live release serving meanwhile', async () => {
      const x = release('x');
      const y = release('y');
      await apps!.activate(to(x));
      const first = await json(apps!.upstream(applicationId));
      const routedToX = apps!.upstream(applicationId)!;
      const slow = inFlight(routedToX);
      await apps!.activate(to(y));

      // A secret changed meanwhile: the draining process runs with the old environment.
      env.set(x, { VERSION: 'x2' });
      const back = apps!.activate(to(x)).then(() => events.push(`live ${x}`));
      // It waits for X's drain, which waits for the slow request: Y serves meanwhile.
      expect((await json(apps!.upstream(applicationId))).version).toBe('y');
      expect(slow.settled()).toBe(false);

      // The slow request answered: the drain is over, the old process stopped, then X starts afresh.
      await answer(routedToX, '/release');
      expect(await slow.answer).toEqual({ status: 200, body: 'slow done' });
      await back;
      const again = await json(apps!.upstream(applicationId));
      expect(again.version).toBe('x2');
      expect(again.boot).not.toBe(first.boot);
      expect(events.slice(0, 2)).toEqual([`stopped ${x}`, `live ${x}`]);
      expect(await boots(x)).toBe(2);
    }, 90_000);
  });
}
