import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RuntimeFile } from '@slipway/config';
import { alive, freePort, type RunningProcess, type TestDatabase } from '@slipway/testing';

export { ROOT, LAUNCHER_MAIN as LAUNCHER, CLI_MAIN as CLI, alive } from '@slipway/testing';
export const TEST_REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** The launcher's environment on free ports; no REDIS_URL unless `extra` sets one (then the launcher runs its own). */
export async function launcherEnv(home: string, extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const [gateway, auth, edge, worker, pgbouncer] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  return {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    SLIPWAY_HOME: home,
    GATEWAY_PORT: String(gateway),
    AUTH_PORT: String(auth),
    EDGE_PORT: String(edge),
    BUILD_WORKER_PORT: String(worker),
    SLIPWAY_PGBOUNCER_PORT: String(pgbouncer),
    PUBLIC_URL: `http://localhost:${gateway}`,
    ...extra,
  };
}

export async function readRuntime(home: string): Promise<RuntimeFile> {
  return JSON.parse(await readFile(join(home, 'runtime.json'), 'utf8')) as RuntimeFile;
}

export async function expectCleanStop(launcher: RunningProcess, home: string): Promise<void> {
  const pids = Object.values((await readRuntime(home)).processes);
  expect(pids.length).toBeGreaterThanOrEqual(4);
  expect(pids.every(alive)).toBe(true);
  process.kill(launcher.child.pid!, 'SIGINT');
  const { code } = await launcher.exited;
  expect(code).toBe(0);
  expect(pids.filter(alive)).toEqual([]);
  await expect(readFile(join(home, 'runtime.json'))).rejects.toThrow(/ENOENT/);
}

/** A scratch SLIPWAY_HOME, open to the embedded Postgres's own user (`postgres`) when we are root. */
export async function scratchHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'slipway-home-'));
  await chmod(home, 0o755);
  return home;
}

/** After a test: Ctrl-C to the launcher, whatever it left running killed, then its database and home gone. */
export async function cleanUp(launcher: RunningProcess | undefined, home: string, db: TestDatabase | undefined): Promise<void> {
  await launcher?.stop('SIGINT');
  await killLeftovers(home);
  await db?.drop();
  await rm(home, { recursive: true, force: true });
}

/** After a failed test: whatever a killed launcher left running (its detached redis-server). */
async function killLeftovers(home: string): Promise<void> {
  const runtime = await readRuntime(home).catch(() => undefined);
  for (const pid of Object.values(runtime?.processes ?? {})) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
