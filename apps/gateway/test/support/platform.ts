import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueToken } from '@slipway/crypto';
import { startHttpApp } from '@slipway/service-kit';
import { createTestDatabase, serviceTestEnv, testRedisPrefix, type TestDatabase } from '@slipway/testing';
import pg from 'pg';
import { AppModule } from '../../src/app.module.js';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config.js';

export interface TestApplication {
  id: string;
  slug: string;
  key: string;
  keyId: string;
}

export interface GatewayUnderTest {
  url: string;
  config: GatewayConfig;
  db: TestDatabase;
  sql: pg.Pool;
  redisPrefix: string;
  blobDir: string;
  uploadDir: string;
  createApplication(name?: string): Promise<TestApplication>;
  close(): Promise<void>;
}

let counter = 0;

/** The gateway on a real port, over its own database, Redis prefix, blob and upload dirs. */
export async function startGateway(label: string, overrides: Record<string, string> = {}, options: { logLevel?: string } = {}): Promise<GatewayUnderTest> {
  const db = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const blobDir = await mkdtemp(join(tmpdir(), `slipway-${label}-blobs-`));
  const uploadDir = await mkdtemp(join(tmpdir(), `slipway-${label}-uploads-`));
  const config = loadGatewayConfig(
    serviceTestEnv(db.url, { BLOB_DIR: blobDir, UPLOAD_TMP_DIR: uploadDir, QUEUE_PREFIX: redis.prefix.replace(/:$/, ''), ...overrides }),
  );
  // startHttpApp directly (not startServiceForTest) so a test can choose the log level it captures.
  const app = await startHttpApp({
    name: 'gateway',
    module: AppModule.register(config),
    port: 0,
    host: '127.0.0.1',
    logLevel: options.logLevel ?? 'warn',
    baseUrl: 'http://localhost:3000',
  });
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const sql = new pg.Pool({ connectionString: db.url, max: 3 });
  // close() drops the database WITH (FORCE): a connection still closing then ends with 57P01, which an idle pool emits as 'error'.
  sql.on('error', () => undefined);
  const { rows } = await sql.query<{ id: string }>(`INSERT INTO owners (email) VALUES ($1) RETURNING id`, [`${label}-${Date.now()}@example.com`]);
  const ownerId = rows[0]!.id;
  return {
    url,
    config,
    db,
    sql,
    redisPrefix: redis.prefix.replace(/:$/, ''),
    blobDir,
    uploadDir,
    async createApplication(name = `app-${++counter}`) {
      const slug = `${name}-${counter}-${Math.random().toString(36).slice(2, 6)}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
      const app = await sql.query<{ id: string }>(`INSERT INTO applications (owner_id, name, slug) VALUES ($1, $2, $3) RETURNING id`, [ownerId, name, slug]);
      const token = issueToken('api_key');
      const key = await sql.query<{ id: string }>(`INSERT INTO api_keys (application_id, name, prefix, key_hash) VALUES ($1, 'test', $2, $3) RETURNING id`, [
        app.rows[0]!.id,
        token.prefix,
        token.hash,
      ]);
      return { id: app.rows[0]!.id, slug, key: token.token, keyId: key.rows[0]!.id };
    },
    async close() {
      await app.close();
      await sql.end();
      await redis.cleanup();
      await db.drop();
      await rm(blobDir, { recursive: true, force: true });
      await rm(uploadDir, { recursive: true, force: true });
    },
  };
}
