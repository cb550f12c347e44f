import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '@nestjs/common';
import type { BlobStore } from '@slipway/blob';
import { LIMITS } from '@slipway/contract';
import { LocalDriver, type RuntimeDriver } from '@slipway/runtime';
import { LocalSandbox, ensureDir, parseSandboxSubnet } from '@slipway/sandbox';
import { nodeToolchainsFor } from '@slipway/toolchains';
import { logLimitsOf, type DataPlaneConfig } from '../config.js';
import { nginxWorker } from '../nginx/nginx-user.js';

/** What the local driver reads of its process's configuration (the edge's, or the runtime supervisor's). */
export type LocalDriverConfig = Pick<
  DataPlaneConfig,
  | 'HEALTH_TIMEOUT_MS'
  | 'NODE_TOOLCHAIN_DIR'
  | 'NODE_REGISTRY_URL'
  | 'SLIPWAY_HOME'
  | 'RUNTIME_SANDBOX'
  | 'APP_USER'
  | 'RUNTIME_MEMORY_MB'
  | 'RUNTIME_PIDS'
  | 'RUNTIME_CPUS'
  | 'RUNTIME_TMP_MB'
  | 'RUNTIME_NETWORK'
  | 'RUNTIME_NETWORK_SUBNET'
  | 'RUNTIME_LOG_MAX_BYTES'
  | 'RUNTIME_LOG_FILES'
  | 'RUNTIME_LOG_RATE_BYTES'
  | 'RUNTIME_LOG_BURST_BYTES'
  | 'RUNTIME_LOG_READ_RATE_BYTES'
  | 'PORT'
  | 'PUBLIC_URL'
  | 'AUTH_PUBLIC_URL'
  | 'EDGE_DATA_PLANE'
  | 'NGINX_USER'
>;

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
 * The driver that starts apps as children of this process (the edge's, or the runtime
 * supervisor's: `records`, its state directory, lets its apps outlive it for its successor).
 */
export async function createLocalDriver(config: LocalDriverConfig, blobs: BlobStore, runtimeDir: string, records?: string): Promise<RuntimeDriver> {
  await ensureDir(runtimeDir, 0o711);
  await ensureDir(join(runtimeDir, 'releases'), 0o711);
  await ensureDir(join(runtimeDir, 'logs'), 0o700);
  // The same cache the build worker fills: a release runs on the Node it was built with.
  const toolchains = nodeToolchainsFor(config, LIMITS.node.supportedMajors);
  if (config.RUNTIME_SANDBOX === 'off') {
    return new LocalDriver({
      blobs,
      dir: runtimeDir,
      healthTimeoutMs: config.HEALTH_TIMEOUT_MS,
      toolchains,
      logLimits: logLimitsOf(config),
      user: await appUser(config.APP_USER, join(runtimeDir, 'releases')),
      records,
    });
  }
  const sandbox = new LocalSandbox({
    limits: { memoryBytes: config.RUNTIME_MEMORY_MB * MIB, pids: config.RUNTIME_PIDS, cpus: config.RUNTIME_CPUS },
    tmpBytes: config.RUNTIME_TMP_MB * MIB,
    hostPorts: appHostPorts(config),
    forbiddenUids: await platformUids(config.APP_USER),
    network: { mode: config.RUNTIME_NETWORK, subnet: parseSandboxSubnet(config.RUNTIME_NETWORK_SUBNET), clientUids: proxyUids(config) },
    onNotice: (line) => new Logger('runtime').log(line),
  });
  return new LocalDriver({ blobs, dir: runtimeDir, healthTimeoutMs: config.HEALTH_TIMEOUT_MS, sandbox, toolchains, logLimits: logLimitsOf(config), records });
}

const MIB = 1024 * 1024;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** The port of a loopback URL (what an app reaches at 127.0.0.1 inside its sandbox), else none. */
export function loopbackPort(url: string): number[] {
  try {
    const parsed = new URL(url);
    if (!LOOPBACK.has(parsed.hostname)) return [];
    return [Number(parsed.port || (parsed.protocol === 'https:' ? 443 : parsed.protocol === 'http:' ? 80 : 5432))];
  } catch {
    return [];
  }
}

/**
 * The host loopback ports every sandboxed app may reach: the edge, the sign-in service and the
 * platform API (its public addresses). Nothing else of the host: not Redis, not Postgres, not the
 * services' other ports, not other apps' ports. An app that has a database reaches PgBouncer's
 * port besides (`ReleaseToRun.hostPorts`, edge-server's describe). They come from the platform's
 * configuration only, never from anything a tenant set.
 */
export function appHostPorts(config: Pick<DataPlaneConfig, 'PORT' | 'PUBLIC_URL' | 'AUTH_PUBLIC_URL'>): number[] {
  return [...new Set([config.PORT, ...loopbackPort(config.PUBLIC_URL), ...loopbackPort(config.AUTH_PUBLIC_URL)])];
}

/** Uids no app may get: the platform's own and the build user's. */
async function platformUids(buildUser: string): Promise<number[]> {
  const uids = [process.getuid?.() ?? 0];
  try {
    uids.push(Number((await run('id', ['-u', buildUser])).stdout));
  } catch {
    /* no build user here */
  }
  return uids;
}

/**
 * Who may open connections to sandboxed apps besides root (the kernel path's host rules): nginx's
 * workers, as NGINX_USER (made here when missing, as the data plane makes it), on the nginx data plane.
 */
function proxyUids(config: Pick<DataPlaneConfig, 'EDGE_DATA_PLANE' | 'NGINX_USER'>): () => Promise<number[]> {
  return async () => (config.EDGE_DATA_PLANE === 'nginx' ? [(await nginxWorker(config.NGINX_USER)).uid] : []);
}
