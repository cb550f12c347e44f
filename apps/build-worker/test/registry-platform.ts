import { mkdir } from 'node:fs/promises';
import { DeployHarness, freePort, outwardEnv } from '@slipway/testing';

/** Where these suites keep fetched Node and package-manager toolchains between runs. */
export const TOOLCHAINS = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';

/**
 * A worker and an edge that fetch toolchains from the registry: the shared toolchain cache, and
 * the operator's CA and proxies (`outwardEnv`) as `pnpm start` passes them on.
 */
export async function startRegistryPlatform(label: string, extra: { edge?: Record<string, string>; worker?: Record<string, string> } = {}): Promise<{ h: DeployHarness; port: number }> {
  await mkdir(TOOLCHAINS, { recursive: true, mode: 0o755 });
  const h = await DeployHarness.create(label);
  const port = await freePort();
  const shared = { NODE_TOOLCHAIN_DIR: TOOLCHAINS, ...outwardEnv() };
  await h.startEdge(port, { HEALTH_TIMEOUT_MS: '30000', ...extra.edge, ...shared });
  await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}`, ...extra.worker, ...shared });
  return { h, port };
}
