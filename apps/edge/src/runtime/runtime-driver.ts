import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { LocalDriver, RELEASE_ARTIFACT_PATH, kubernetesDriverFromEnvironment, releaseArtifactToken, type RuntimeDriver } from '@slipway/runtime';
import type { EdgeConfig } from '../config.js';

const run = promisify(execFile);

/** The unprivileged user apps run as, when the edge is root and that user can reach the releases. */
async function appUser(name: string, releasesDir: string): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  let ids: { uid: number; gid: number };
  try {
    ids = { uid: Number((await run('id', ['-u', name])).stdout), gid: Number((await run('id', ['-g', name])).stdout) };
  } catch {
    return undefined;
  }
  await mkdir(releasesDir, { recursive: true });
  try {
    await run('sh', ['-c', 'test -r "$1" && test -x "$1"', 'sh', releasesDir], ids);
    return ids;
  } catch {
    new Logger('edge').warn(`${name} cannot reach ${releasesDir} (make its parents o+x); apps run as the edge's own user`);
    return undefined;
  }
}

/**
 * The runtime driver `SLIPWAY_RUNTIME_DRIVER` names: `local` (child processes of this edge) or
 * `kubernetes` (pods download their artifact from this edge at `SLIPWAY_RUNTIME_EDGE_URL`
 * with a token derived for that release only).
 */
export async function createRuntimeDriver(config: EdgeConfig, blobs: BlobStore, runtimeDir: string): Promise<RuntimeDriver> {
  if (config.SLIPWAY_RUNTIME_DRIVER === 'kubernetes') {
    const base = config.SLIPWAY_RUNTIME_EDGE_URL!.replace(/\/+$/, '');
    return kubernetesDriverFromEnvironment({
      namespace: config.SLIPWAY_RUNTIME_NAMESPACE,
      image: config.SLIPWAY_RUNTIME_IMAGE,
      artifactUrl: (releaseId) => `${base}${RELEASE_ARTIFACT_PATH(releaseId)}`,
      artifactToken: (releaseId) => releaseArtifactToken(config.SLIPWAY_MASTER_KEY, releaseId),
      readyTimeoutMs: config.HEALTH_TIMEOUT_MS,
    });
  }
  return new LocalDriver({ blobs, dir: runtimeDir, healthTimeoutMs: config.HEALTH_TIMEOUT_MS, user: await appUser(config.APP_USER, join(runtimeDir, 'releases')) });
}
