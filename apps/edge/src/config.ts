import { availableParallelism } from 'node:os';
import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { baseServerFields, loadConfig, masterKey, port, postgresUrl, publicUrlFields, z } from '@slipway/config';
import { DEFAULT_QUEUE_PREFIX } from '@slipway/messaging';
import { checkLocalRuntime, localRuntimeFields, nginxPlaneFields } from '@slipway/data-plane';
import { tlsConfigFields } from './tls-config.js';

export const edgeConfigSchema = z
  .object({
    ...baseServerFields,
    ...publicUrlFields,
    PORT: port(8080),
    SLIPWAY_MASTER_KEY: masterKey,
    /** BLOB_DIR or S3_* (see libs/blob). */
    ...blobStorageFields,
    /** Where and how apps run on this host, shared with the runtime supervisor (libs/data-plane `config.ts`). */
    ...localRuntimeFields,
    /**
     * Memory for static releases, in MiB: file contents (each form up to 256 KiB; bigger ones are
     * streamed from disk) keyed by release and real path, and path lookups (1/8 of it), least
     * recently used dropped first. A release's entries go when it stops being live.
     */
    STATIC_CACHE_MB: z.coerce.number().min(0).default(64),
    /** Redis prefix shared with the build worker (routes channel `<prefix>:routes`). */
    QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
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
    /**
     * Where applications reach their own databases: the platform's PgBouncer (`pnpm start` sets it,
     * `postgresql://127.0.0.1:<port>`). An app's DATABASE_URL names it, and with the local sandbox
     * its port is forwarded into the namespace of an application that HAS a database, and of no
     * other. Unset: DATABASE_URL names the server in DATABASE_URL, and no database port is forwarded
     * into any sandbox (on one machine, sandboxed apps then cannot reach a database at all).
     */
    APP_DATABASES_POOLER_URL: postgresUrl.optional(),
    /**
     * Where Node releases run: `local` (child processes of this edge, the default) or `kubernetes`
     * (a Secret + Deployment + Service per release, credentials from the in-cluster service account
     * or KUBECONFIG; the edge proxies to the Service). Static releases are served by the edge either way.
     */
    SLIPWAY_RUNTIME_DRIVER: z.enum(['local', 'kubernetes']).default('local'),
    /** `1`: a standby edge (the launcher's): modules loaded, it waits for SIGUSR2 to take over from a crashed edge. */
    SLIPWAY_EDGE_STANDBY: z.enum(['0', '1']).default('0'),
    /** nginx in front, shared with the runtime supervisor (libs/data-plane `config.ts`). */
    ...nginxPlaneFields,
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
    checkLocalRuntime(config, ctx);
  });

export type EdgeConfig = z.output<typeof edgeConfigSchema>;

/** RUNTIME_START_CONCURRENCY as a number: `auto` is one start per core, at least 2, at most 16. */
export function startConcurrency(config: Pick<EdgeConfig, 'RUNTIME_START_CONCURRENCY'>, cores = availableParallelism()): number {
  return config.RUNTIME_START_CONCURRENCY === 'auto' ? Math.max(2, Math.min(cores, 16)) : config.RUNTIME_START_CONCURRENCY;
}

/** The only place this app reads the environment. */
export function loadEdgeConfig(env: NodeJS.ProcessEnv = process.env): EdgeConfig {
  return loadConfig(edgeConfigSchema, env);
}
