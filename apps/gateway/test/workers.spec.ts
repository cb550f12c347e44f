import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueToken } from '@slipway/crypto';
import { createTestDatabase, freePort, startProcess, testRedisPrefix, serviceTestEnv, waitFor, type RunningProcess, type TestDatabase } from '@slipway/testing';
import pg from 'pg';
import { filesForm, multipart, send } from './support/http.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Pids of the live processes whose parent is `pid` (from /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid && fields[0] !== 'Z') children.push(Number(entry));
  }
  return children;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('GATEWAY_WORKERS: several processes serving one port (real processes, Postgres, Redis)', () => {
  let db: TestDatabase;
  let sql: pg.Pool;
  let dir: string;
  let ownerId: string;
  const redis = testRedisPrefix('workers');
  const started: RunningProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('workers');
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    dir = await mkdtemp(join(tmpdir(), 'slipway-workers-'));
    ownerId = (await sql.query<{ id: string }>(`INSERT INTO owners (email) VALUES ('workers@example.com') RETURNING id`)).rows[0]!.id;
  });
  afterAll(async () => {
    for (const p of started) await p.stop('SIGKILL');
    await sql.end();
    await redis.cleanup();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(workers: string, port: number): Promise<RunningProcess> {
    const child = startProcess(process.execPath, [MAIN], {
      env: serviceTestEnv(db.url, {
        PATH: process.env['PATH']!,
        PORT: String(port),
        LOG_LEVEL: 'log',
        NO_COLOR: '1',
        BLOB_DIR: join(dir, 'blobs'),
        UPLOAD_TMP_DIR: dir,
        QUEUE_PREFIX: redis.prefix.replace(/:$/, ''),
        GATEWAY_WORKERS: workers,
      }),
    });
    started.push(child);
    return child;
  }

  async function createApplication(i: number): Promise<string> {
    const app = await sql.query<{ id: string }>(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $2) RETURNING id`, [
      ownerId,
      `w-${i}-${randomBytes(3).toString('hex')}`,
    ]);
    const token = issueToken('api_key');
    await sql.query(`INSERT INTO api_keys (application_id, name, prefix, key_hash) VALUES ($1, 'test', $2, $3)`, [app.rows[0]!.id, token.prefix, token.hash]);
    return token.token;
  }

  it('refuses a bad GATEWAY_WORKERS with one line and exit 1', async () => {
    const child = await start('none', await freePort());
    expect((await child.exited).code).toBe(1);
    expect(child.output().trim()).toBe('gateway: cannot start: GATEWAY_WORKERS: must be a whole number from 1 to 999, or auto (got "none")');
  });

  it('serves deploys from two worker processes; SIGTERM to the primary alone stops every worker, exit 0', async () => {
    const port = await freePort();
    const primary = await start('2', port);
    await primary.waitForOutput(/2 worker processes serving http:\/\/127\.0\.0\.1:\d+/);
    const workers = await childrenOf(primary.child.pid!);
    expect(workers).toHaveLength(2);

    const keys = await Promise.all(Array.from({ length: 16 }, (_, i) => createApplication(i)));
    const { body, contentType } = multipart(filesForm({ 'index.html': '<h1>hi</h1>' }));
    const answers = await Promise.all(
      keys.map((key) =>
        send(`http://127.0.0.1:${port}/api/v1/deploy`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(keys.map(() => 202));
    // Nest prefixes every line with the pid of the process that wrote it.
    const servedBy = new Set([...primary.output().matchAll(/\[Nest\] (\d+) .*deployment [0-9a-f-]{36} queued/g)].map((m) => Number(m[1])));
    expect([...servedBy].sort()).toEqual([...workers].sort());
    expect((await sql.query('SELECT count(*)::int AS n FROM deployments')).rows[0].n).toBe(16);

    primary.child.kill('SIGTERM'); // the primary only, not its process group
    expect(await primary.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => workers.every((pid) => !alive(pid)), { what: 'worker processes to exit', timeoutMs: 5000 });
  });

  it('leaves no worker behind when the primary is killed outright', async () => {
    const primary = await start('2', await freePort());
    await primary.waitForOutput(/2 worker processes serving/);
    const workers = await childrenOf(primary.child.pid!);
    expect(workers).toHaveLength(2);
    primary.child.kill('SIGKILL');
    await primary.exited;
    await waitFor(() => workers.every((pid) => !alive(pid)), { what: 'worker processes to exit', timeoutMs: 10_000 });
  });
});
