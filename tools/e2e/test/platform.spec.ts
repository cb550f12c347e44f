/**
 * A user's path through the whole platform, with nothing stubbed: launcher → gateway (upload,
 * queue) → build worker (bwrap build) → edge (serving by Host), driven by the real CLI binary.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURES, createEmptyDatabase, freePort, startProcess, type RunningProcess, type TestDatabase } from '@slipway/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const LAUNCHER = join(ROOT, 'tools/launcher/dist/main.js');
const CLI = join(ROOT, 'apps/cli/dist/main.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** fetch() drops a `Host` header, so this speaks node:http: 127.0.0.1 with the app's host name. */
function viaEdge(edgePort: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: edgePort, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the platform end to end', () => {
  let home: string;
  let db: TestDatabase;
  let launcher: RunningProcess;
  let ports: { gateway: number; edge: number };
  let cliEnv: NodeJS.ProcessEnv;
  let slug: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'slipway-e2e-'));
    await chmod(home, 0o755);
    db = await createEmptyDatabase('e2e');
    const [gateway, auth, edge, worker] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    ports = { gateway, edge };
    launcher = startProcess(process.execPath, [LAUNCHER], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        SLIPWAY_HOME: home,
        DATABASE_URL: db.url,
        REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
        // A queue of this run's own, so other suites' workers never take these jobs.
        QUEUE_PREFIX: `slipway-e2e-${process.pid}`,
        GATEWAY_PORT: String(gateway),
        AUTH_PORT: String(auth),
        EDGE_PORT: String(edge),
        BUILD_WORKER_PORT: String(worker),
        PUBLIC_URL: `http://localhost:${gateway}`,
        APPS_DOMAIN: `localhost:${edge}`,
      },
    });
    await launcher.waitForOutput(/Slipway is ready/, 90_000);
    const boot = await cli(['admin', 'bootstrap', '--email', 'e2e@example.com', '--app', 'E2E Shop', '--json'], { PATH: process.env['PATH'], SLIPWAY_HOME: home });
    expect(boot.code).toBe(0);
    const account = JSON.parse(boot.stdout) as { apiKey: string; slug: string; appUrl: string };
    slug = account.slug;
    expect(account.appUrl).toBe(`http://${slug}.localhost:${edge}`);
    cliEnv = { PATH: process.env['PATH'], SLIPWAY_URL: `http://127.0.0.1:${gateway}`, SLIPWAY_API_KEY: account.apiKey, SLIPWAY_POLL_INTERVAL_MS: '200' };
  }, 120_000);

  afterAll(async () => {
    await launcher?.stop('SIGINT');
    await db?.drop();
    await rm(home, { recursive: true, force: true });
  });

  it('deploys a static site from a folder and serves it at its address', async () => {
    const result = await cli(['deploy', join(FIXTURES, 'static-site'), '--json'], cliEnv);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const task = JSON.parse(result.stdout);
    expect(task).toMatchObject({ status: 'succeeded', spec: { kind: 'static' }, url: `http://${slug}.localhost:${ports.edge}` });
    expect(task.steps.map((s: { name: string }) => s.name)).toEqual(['receive', 'analyze', 'install', 'build', 'scan', 'package', 'release']);
    const index = await readFile(join(FIXTURES, 'static-site', 'index.html'), 'utf8');
    expect(await viaEdge(ports.edge, `${slug}.localhost:${ports.edge}`)).toEqual({ status: 200, body: index });
    expect((await viaEdge(ports.edge, `nobody.localhost:${ports.edge}`)).status).toBe(404);
  });

  it('deploys a Node server, keeps .env out of the upload, and tells the truth about a broken build', async () => {
    const app = await mkdtemp(join(tmpdir(), 'slipway-e2e-node-'));
    await cp(join(FIXTURES, 'node-server'), app, { recursive: true });
    await writeFile(join(app, '.env'), 'GREETING=from-a-file-that-must-not-be-uploaded\n');
    expect((await cli(['secrets', 'set', 'GREETING=hello-e2e', '--json'], cliEnv)).code).toBe(0);

    const node = await cli(['deploy', app, '--json'], cliEnv);
    expect(node.code).toBe(0);
    expect(JSON.parse(node.stdout)).toMatchObject({ status: 'succeeded', spec: { kind: 'node' } });
    const served = await viaEdge(ports.edge, `${slug}.localhost:${ports.edge}`, '/hello');
    expect(served).toEqual({ status: 200, body: '<p>node fixture v1 /hello</p>' });
    expect(node.stdout).not.toContain('from-a-file-that-must-not-be-uploaded');

    const broken = await cli(['deploy', join(FIXTURES, 'broken-build'), '--json'], cliEnv);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ status: 'failed', error: { step: 'build', code: 'build_failed' } });
    // The failed deploy leaves the previous release serving.
    expect(await viaEdge(ports.edge, `${slug}.localhost:${ports.edge}`, '/hello')).toEqual(served);
    await rm(app, { recursive: true, force: true });
  });

  it('stops everything on Ctrl-C', async () => {
    const runtime = JSON.parse(await readFile(join(home, 'runtime.json'), 'utf8')) as { processes: Record<string, number> };
    process.kill(launcher.child.pid!, 'SIGINT');
    expect((await launcher.exited).code).toBe(0);
    const alive = Object.values(runtime.processes).filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});
