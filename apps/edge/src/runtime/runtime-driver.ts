import type { BlobStore } from '@slipway/blob';
import { RemoteRuntimeDriver, createLocalDriver } from '@slipway/data-plane';
import { RELEASE_ARTIFACT_PATH, releaseArtifactToken } from '@slipway/messaging';
import { kubernetesDriverFromEnvironment, type RuntimeDriver } from '@slipway/runtime';
import { ensureDir } from '@slipway/sandbox';
import type { EdgeConfig } from '../config.js';

/**
 * The runtime driver `SLIPWAY_RUNTIME_DRIVER` names: `local` (child processes of this edge, or of
 * the runtime supervisor at `RUNTIME_SUPERVISOR_SOCKET` when the launcher runs one) or
 * `kubernetes` (pods download their artifact from this edge at `SLIPWAY_RUNTIME_EDGE_URL`
 * with a token derived for that release only).
 */
export async function createRuntimeDriver(
  config: EdgeConfig,
  blobs: BlobStore,
  runtimeDir: string,
  onSupervisorLost: (reason: string) => void = () => undefined,
): Promise<RuntimeDriver> {
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
  if (config.RUNTIME_SUPERVISOR_SOCKET) {
    await ensureDir(runtimeDir, 0o711);
    return RemoteRuntimeDriver.connect(config.RUNTIME_SUPERVISOR_SOCKET, runtimeDir, config.STARTUP_TIMEOUT_MS, onSupervisorLost, config.RUNTIME_LOG_FILES);
  }
  return createLocalDriver(config, blobs, runtimeDir);
}

/**
 * The port the analyzer found a release's server listening on instead of PORT (`spec.port`,
 * source `fixed`): its sandbox starts routed there (the local driver checks it is a port number).
 */
export function fixedPortOf(spec: Record<string, unknown>): number | undefined {
  const port = spec['port'] as { source?: unknown; fixed?: unknown } | null | undefined;
  return port?.source === 'fixed' && typeof port.fixed === 'number' ? port.fixed : undefined;
}
