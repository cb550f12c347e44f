import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, freePort, startProcess, testRedisPrefix, serviceTestEnv, waitFor } from '@slipway/testing';
import pg from 'pg';

export const WORKSPACE_ROOT = resolve(import.meta.dirname, '../../../..');

export interface GatewayProcess {
  url: string;
  sql: pg.Pool;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The real built gateway (`node apps/gateway/dist/main.js`, serving the built dashboard) on a free
 * port over its own database, Redis prefix and blob directory.
 */
export async function startGatewayProcess(label: string, extraEnv: Record<string, string> = {}): Promise<GatewayProcess> {
  const db = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const dir = await mkdtemp(join(tmpdir(), `slipway-${label}-`));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startProcess('node', [join(WORKSPACE_ROOT, 'apps/gateway/dist/main.js')], {
    cwd: WORKSPACE_ROOT,
    env: serviceTestEnv(db.url, {
      PATH: process.env['PATH']!,
      PORT: String(port),
      PUBLIC_URL: url,
      BLOB_DIR: join(dir, 'blobs'),
      UPLOAD_TMP_DIR: dir,
      QUEUE_PREFIX: redis.prefix.replace(/:$/, ''),
      BCRYPT_ROUNDS: '4',
      ...extraEnv,
    }),
  });
  await waitFor(async () => (await fetch(`${url}/health/ready`)).ok || undefined, {
    timeoutMs: 30_000,
    what: `gateway at ${url}; output: ${child.output()}`,
  }).catch(async (error: unknown) => {
    await child.stop();
    throw new Error(`${(error as Error).message}\n${child.output()}`);
  });
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });
  // The database is dropped WITH (FORCE) at close: a connection still closing must not crash the test.
  sql.on('error', () => undefined);
  return {
    url,
    sql,
    output: child.output,
    async stop() {
      await child.stop();
      await sql.end();
      await redis.cleanup();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
