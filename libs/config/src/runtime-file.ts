import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where `pnpm start` keeps its local state (embedded Postgres, Redis, blobs, master key). */
export function slipwayHome(repoRoot: string): string {
  return join(repoRoot, '.slipway');
}

/** What a running `pnpm start` publishes for operator commands (e.g. `slipway admin bootstrap`). */
export interface RuntimeFile {
  pid: number;
  databaseUrl: string;
  redisUrl: string;
  publicUrl: string;
  authPublicUrl: string;
  appsDomain: string;
  appsScheme: 'http' | 'https';
  startedAt: string;
  /** Process ids of what the launcher started, by name (services, and postgres/redis when embedded). */
  processes: Record<string, number>;
}

export function readRuntimeFile(home: string): RuntimeFile | undefined {
  try {
    return JSON.parse(readFileSync(join(home, 'runtime.json'), 'utf8')) as RuntimeFile;
  } catch {
    return undefined;
  }
}
