import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePort, startProcess, testRedisPrefix, waitFor, TEST_REDIS_URL, type RunningProcess, type TestDatabase } from '@slipway/testing';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

export interface Platform {
  gatewayUrl: string;
  authUrl: string;
  db: TestDatabase;
  masterKey: string;
  close(): Promise<void>;
}

/** The built gateway and auth-service as real processes over one platform database and Redis prefix. */
export async function startPlatform(label: string, authEnv: Record<string, string> = {}): Promise<Platform> {
  const db = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const blobDir = await mkdtemp(join(tmpdir(), `slipway-${label}-`));
  const [gatewayPort, authPort] = [await freePort(), await freePort()];
  const masterKey = randomBytes(32).toString('base64');
  const authUrl = `http://127.0.0.1:${authPort}`;
  const common = {
    PATH: process.env['PATH'],
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    SLIPWAY_MASTER_KEY: masterKey,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    AUTH_PUBLIC_URL: authUrl,
  };
  const processes: RunningProcess[] = [
    startProcess('node', [join(REPO, 'apps/gateway/dist/main.js')], {
      env: {
        ...common,
        PORT: String(gatewayPort),
        BLOB_DIR: blobDir,
        UPLOAD_TMP_DIR: blobDir,
        QUEUE_PREFIX: redis.prefix.replace(/:$/, ''),
        BCRYPT_ROUNDS: '4',
      },
    }),
    startProcess('node', [join(REPO, 'apps/auth-service/dist/main.js')], {
      env: { ...common, PORT: String(authPort), AUTH_REDIS_PREFIX: redis.prefix, AUTH_BCRYPT_COST: '4', AUTH_TENANT_CACHE_SECONDS: '0', ...authEnv },
    }),
  ];
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const close = async () => {
    for (const p of processes) await p.stop();
    await redis.cleanup();
    await db.drop();
    await rm(blobDir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(`${gatewayUrl}/health/ready`)).ok && (await fetch(`${authUrl}/health/ready`)).ok, {
      timeoutMs: 30_000,
      what: 'gateway and auth-service ready',
    });
  } catch (error) {
    const output = processes.map((p) => p.output()).join('\n');
    await close();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }
  return { gatewayUrl, authUrl, db, masterKey, close };
}
