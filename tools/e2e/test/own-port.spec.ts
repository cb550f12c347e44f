/**
 * Node apps as generators leave them, deployed through the whole platform (launcher, gateway,
 * worker, runtime supervisor and edge, the runtime sandbox on): a server that listens on a port
 * of its own instead of PORT (create-hono's Node template: `serve({ fetch: app.fetch, port: 3000 })`)
 * is found and routed to; an Angular SSR server gets its own hosts in NG_ALLOWED_HOSTS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Platform, type Account } from './support/platform.js';

/** create-hono's Node template without its dependencies: a `serve({ fetch, port })` of its own. */
const HONO_LIKE = `import { createServer } from 'node:http';
const serve = ({ fetch, port }) => createServer(async (req, res) => {
  const response = await fetch(new Request(\`http://\${req.headers.host}\${req.url}\`));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(await response.text());
}).listen(port);
serve({ fetch: async () => new Response('<h1>Hello Hono!</h1>', { headers: { 'content-type': 'text/html' } }), port: 3000 });
`;

/** A port the analyzer cannot see: read from a file. */
const PORT_FROM_FILE = `import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((req, res) => res.end('<p>port from a file</p>')).listen(Number(readFileSync('port.txt', 'utf8')));
`;

/** Says which version answers and what NG_ALLOWED_HOSTS it was given. */
const ENV_ECHO = (version: string) => `import { createServer } from 'node:http';
createServer((req, res) => res.end(JSON.stringify({ version: '${version}', hosts: process.env.NG_ALLOWED_HOSTS ?? null }))).listen(Number(process.env.PORT));
`;

interface Task {
  status: string;
  warnings: { code: string; detail?: string; message: string }[];
  steps: { name: string; log?: string }[];
  error?: unknown;
}

describe('apps as generators leave them', () => {
  let platform: Platform;
  const dirs: string[] = [];

  async function project(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-e2e-own-port-'));
    dirs.push(dir);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'own-port', private: true, type: 'module', scripts: { start: 'node server.js' } }));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  }

  async function deploy(account: Account, dir: string): Promise<Task> {
    const task = (await platform.deploy(account, dir)) as unknown as Task;
    if (task.status !== 'succeeded')
      throw new Error(
        `deploy failed: ${JSON.stringify(task.error)}\n${task.steps
          .map((s) => s.log ?? '')
          .join('\n')
          .slice(-3000)}`,
      );
    return task;
  }

  const releaseLog = (task: Task) => task.steps.find((s) => s.name === 'release')?.log ?? '';

  beforeAll(async () => {
    platform = await Platform.start('own-port');
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('a Hono-like server on a fixed 3000 is served through the edge; one the analyzer cannot see is found too; a rollback to the first serves it again', async () => {
    const account = await platform.bootstrap('hono@example.com', 'Hono Shop');
    const hono = await deploy(account, await project({ 'server.js': HONO_LIKE }));
    expect(await platform.viaEdge(account.slug)).toMatchObject({ status: 200, body: '<h1>Hello Hono!</h1>' });
    expect(releaseLog(hono)).toMatch(/the app listens on 3000, not on PORT \(\d+\): routed to 3000/);
    const warning = hono.warnings.find((w) => w.code === 'port_not_from_env');
    expect(warning).toMatchObject({ detail: '3000', message: expect.stringContaining('routes traffic there') });

    // Found only once it listens: its sandbox starts again with PORT's host port leading there.
    const fromFile = await deploy(account, await project({ 'server.js': PORT_FROM_FILE, 'port.txt': '4000' }));
    expect(releaseLog(fromFile)).toMatch(/the app listens on 4000, not on PORT \(\d+\): routed to 4000/);
    expect(fromFile.warnings.find((w) => w.code === 'port_not_from_env')).toMatchObject({ detail: '4000' });
    expect(await platform.viaEdge(account.slug)).toMatchObject({ status: 200, body: '<p>port from a file</p>' });

    const rollback = await platform.cli(['rollback', '--json'], platform.cliEnv(account));
    expect([rollback.code, rollback.stderr]).toEqual([0, '']);
    expect(await platform.viaEdge(account.slug)).toMatchObject({ status: 200, body: '<h1>Hello Hono!</h1>' });
  }, 300_000);

  it('an Angular server gets its own hosts in NG_ALLOWED_HOSTS (its address without the port, its verified domains), unless the project set its own', async () => {
    const account = await platform.bootstrap('angular@example.com', 'Angular Shop');
    const env = platform.cliEnv(account);
    await deploy(account, await project({ 'server.js': ENV_ECHO('v1') }));
    expect(JSON.parse((await platform.viaEdge(account.slug)).body)).toEqual({ version: 'v1', hosts: null });
    await deploy(account, await project({ 'server.js': ENV_ECHO('v2') }));
    // Both releases as the analyzer reports an Angular SSR project; a domain proved meanwhile.
    await platform.query(`UPDATE releases SET spec = spec || '{"framework":"angular"}'::jsonb WHERE application_id = $1`, [account.applicationId]);
    await platform.query(`INSERT INTO domains (application_id, hostname, verification_token, verified_at) VALUES ($1, 'shop.example.test', 'token', now())`, [
      account.applicationId,
    ]);

    const rollback = await platform.cli(['rollback', '--json'], env);
    expect([rollback.code, rollback.stderr]).toEqual([0, '']);
    expect(JSON.parse((await platform.viaEdge(account.slug)).body)).toEqual({ version: 'v1', hosts: `${account.slug}.localhost,shop.example.test,127.0.0.1` });

    await platform.setSecrets(account, { NG_ALLOWED_HOSTS: 'mine.example.test' });
    const { releases } = JSON.parse((await platform.cli(['releases', '--json'], env)).stdout) as { releases: { id: string; live: boolean }[] };
    const promote = await platform.cli(['promote', releases.find((r) => !r.live)!.id, '--json'], env);
    expect([promote.code, promote.stderr]).toEqual([0, '']);
    expect(JSON.parse((await platform.viaEdge(account.slug)).body)).toEqual({ version: 'v2', hosts: 'mine.example.test' });
  }, 300_000);
});
