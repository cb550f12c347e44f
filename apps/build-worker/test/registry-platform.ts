import { request } from 'node:http';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeployHarness, freePort, outwardEnv, sourceTar } from '@slipway/testing';

/** Where these suites keep fetched Node and package-manager toolchains between runs. */
export const TOOLCHAINS = process.env['SLIPWAY_TEST_TOOLCHAINS'] ?? '/tmp/slipway-toolchains-test';

/**
 * A worker and an edge that fetch toolchains from the registry: the shared toolchain cache, and
 * the operator's CA and proxies (`outwardEnv`) as `pnpm start` passes them on.
 */
export async function startRegistryPlatform(
  label: string,
  extra: { edge?: Record<string, string>; worker?: Record<string, string> } = {},
): Promise<{ h: DeployHarness; port: number }> {
  await mkdir(TOOLCHAINS, { recursive: true, mode: 0o755 });
  const h = await DeployHarness.create(label);
  const port = await freePort();
  const shared = { NODE_TOOLCHAIN_DIR: TOOLCHAINS, ...outwardEnv() };
  await h.startEdge(port, { HEALTH_TIMEOUT_MS: '30000', ...extra.edge, ...shared });
  await h.startWorker({ EDGE_INTERNAL_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: `localhost:${port}`, ...extra.worker, ...shared });
  return { h, port };
}

/** One GET through the edge (127.0.0.1 with the app's Host: Node does not resolve `*.localhost` here). */
export function getThroughEdge(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, timeout: 20_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** A source tar of just these files (path → content), as the gateway stores it. */
export async function projectTar(files: Record<string, string>): Promise<Buffer> {
  const empty = await mkdtemp(join(tmpdir(), 'worker-e2e-src-'));
  try {
    return await sourceTar(empty, files);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}
