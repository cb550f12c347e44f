import { createGunzip } from 'node:zlib';
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI_MAIN,
  ROOT,
  createTestDatabase,
  freePort,
  startProcess,
  testRedisPrefix,
  waitFor,
  serviceTestEnv,
  type CliResult,
  type RunningProcess,
  type TestDatabase,
} from '@slipway/testing';
import pg from 'pg';
import tar from 'tar-stream';

export { CLI_MAIN, type CliResult } from '@slipway/testing';
const GATEWAY_MAIN = join(ROOT, 'apps/gateway/dist/main.js');

export interface Bootstrapped {
  applicationId: string;
  slug: string;
  apiKey: string;
  ownerToken: string;
}

export interface PlatformUnderTest {
  url: string;
  blobDir: string;
  sql: pg.Pool;
  /** An application and its API key, made by the real `slipway admin bootstrap`. */
  bootstrap(app: string): Promise<Bootstrapped>;
  /** Runs the built `slipway` binary (stdout is a pipe, so --json is automatic). */
  cli(args: string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult>;
  /** Starts the binary without waiting for it. */
  spawnCli(args: string[], options?: SpawnOptions): RunningCli;
  /** The environment the CLI gets: the gateway's URL and a fast poll. */
  cliEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run through another program, e.g. `script` for a pty (default: node + the CLI). */
  command?: string[];
}

export interface RunningCli {
  done: Promise<CliResult>;
  /** Types into the process's stdin. */
  write(text: string): void;
  signal(signal: NodeJS.Signals): void;
  output(): { stdout: string; stderr: string };
}

/**
 * The built gateway as a real process (`node apps/gateway/dist/main.js`) over its own database,
 * Redis prefix and blob directory, on a free port.
 */
export async function startPlatform(label: string): Promise<PlatformUnderTest> {
  const db: TestDatabase = await createTestDatabase(label);
  const redis = testRedisPrefix(label);
  const blobDir = await mkdtemp(join(tmpdir(), `slipway-${label}-blobs-`));
  const uploadDir = await mkdtemp(join(tmpdir(), `slipway-${label}-uploads-`));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gateway: RunningProcess = startProcess('node', [GATEWAY_MAIN], {
    env: serviceTestEnv(db.url, {
      PATH: process.env['PATH']!,
      PORT: String(port),
      BLOB_DIR: blobDir,
      UPLOAD_TMP_DIR: uploadDir,
      QUEUE_PREFIX: redis.prefix.replace(/:$/, ''),
    }),
  });
  try {
    await waitFor(async () => (await fetch(`${url}/health/ready`)).ok, { timeoutMs: 30_000, what: `gateway ready at ${url}` });
  } catch (error) {
    await gateway.stop();
    throw new Error(`${(error as Error).message}\n${gateway.output()}`, { cause: error });
  }
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });
  // The database is dropped WITH (FORCE) at close: a connection still closing must not crash the test.
  sql.on('error', () => undefined);
  const children = new Set<ChildProcess>();

  const cliEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env['PATH'],
    SLIPWAY_URL: url,
    SLIPWAY_POLL_INTERVAL_MS: '100',
    ...extra,
  });
  const spawnCli = (args: string[], options: SpawnOptions = {}): RunningCli => {
    const [command, ...prefix] = options.command ?? ['node', CLI_MAIN];
    const child = spawn(command!, [...prefix, ...args], {
      cwd: options.cwd ?? tmpdir(),
      env: options.env ?? cliEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    child.on('close', () => children.delete(child));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { done, write: (text) => child.stdin.write(text), signal: (signal) => child.kill(signal), output: () => ({ stdout, stderr }) };
  };

  return {
    url,
    blobDir,
    sql,
    cliEnv,
    spawnCli,
    cli: (args, options) => spawnCli(args, options).done,
    async bootstrap(app) {
      const result = await spawnCli(['admin', 'bootstrap', '--email', `${label}@example.com`, '--app', app, '--json'], {
        env: { PATH: process.env['PATH'], DATABASE_URL: db.url, SLIPWAY_HOME: '/nonexistent', PUBLIC_URL: url },
      }).done;
      if (result.code !== 0) throw new Error(`bootstrap failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as Bootstrapped;
    },
    async close() {
      // A failed test may leave a CLI waiting on its task: stop those we started (own process group).
      for (const child of children) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await gateway.stop();
      await sql.end();
      await redis.cleanup();
      await db.drop();
      await rm(blobDir, { recursive: true, force: true });
      await rm(uploadDir, { recursive: true, force: true });
    },
  };
}

/** What the gateway stored for a task: `sources/<taskId>.tar.gz` in its BLOB_DIR, name → mode and content. */
export async function storedSource(blobDir: string, taskId: string): Promise<Map<string, { mode: number; content: string; linkname?: string }>> {
  const extract = tar.extract();
  createReadStream(join(blobDir, 'sources', `${taskId}.tar.gz`))
    .pipe(createGunzip())
    .pipe(extract as unknown as NodeJS.WritableStream);
  const entries = new Map<string, { mode: number; content: string; linkname?: string }>();
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const stored = { mode: entry.header.mode!, content: Buffer.concat(chunks).toString('utf8') };
    entries.set(entry.header.name, entry.header.type === 'symlink' ? { ...stored, linkname: entry.header.linkname! } : stored);
  }
  return entries;
}

// eslint-disable-next-line no-control-regex -- ANSI escape sequences are exactly what is matched
export const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
