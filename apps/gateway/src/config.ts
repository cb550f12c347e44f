import { isIP } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { blobStorageFields, checkBlobStorage } from '@slipway/blob';
import { LIMITS, parseStorageQuotas, parseRestoreWindows, type OwnerSignInLimits, type UploadLimits } from '@slipway/contract';
import { baseServerFields, httpUrl, loadConfig, masterKey, parsedBy, port, postgresUrl, publicUrlFields, z } from '@slipway/config';
import { DEFAULT_QUEUE_PREFIX } from '@slipway/messaging';

const dnsServers = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .refine((list) => list.every(isDnsServer), 'must list DNS servers as ip, ip:port or [ipv6]:port, comma separated');

function isDnsServer(server: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server);
  const v4Port = /^([\d.]+):(\d{1,5})$/.exec(server);
  const [ip, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4Port ? [v4Port[1]!, v4Port[2]] : [server, undefined];
  return isIP(ip) !== 0 && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
}

const positiveInt = (fallback: number) => z.coerce.number().int('must be a whole number').positive('must be positive').default(fallback);

export const gatewayConfigSchema = z
  .object({
    ...baseServerFields,
    ...publicUrlFields,
    PORT: port(3000),
    /**
     * How many processes serve the port (node:cluster; docs/decisions/gateway-cluster-workers.md).
     * `1` (default): this process serves it. `auto`: one per available CPU.
     */
    GATEWAY_WORKERS: z
      .string()
      .default('1')
      .refine((v) => v === 'auto' || /^[1-9]\d{0,2}$/.test(v), 'must be a whole number from 1 to 999, or auto')
      .transform((v) => (v === 'auto' ? availableParallelism() : Number(v))),
    SLIPWAY_MASTER_KEY: masterKey,
    /** Local state of `pnpm start`; blobs default to `<SLIPWAY_HOME>/blobs`. */
    SLIPWAY_HOME: z.string().min(1).optional(),
    /** BLOB_DIR (local store, default `<SLIPWAY_HOME or .slipway>/blobs`) or S3_* (see libs/blob). */
    ...blobStorageFields,
    /** `false`: local blobs are not fsync'ed before a deploy is accepted (docs/decisions/source-blob-fsync.md). */
    BLOB_FSYNC: z.enum(['true', 'false']).default('true'),
    /** Where zip and `files` uploads are spooled while they are checked (removed after each request). */
    UPLOAD_TMP_DIR: z.string().min(1).default(tmpdir()),
    /** BullMQ key prefix in Redis; every producer and worker of one platform must agree. */
    QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
    /** A deployment not STARTED this long after it was accepted is failed by the reconciler (`queue_timeout`); a started one has the worker's DEPLOY_TIMEOUT_MS from its start. */
    DEPLOY_DEADLINE_MINUTES: positiveInt(30),
    /** How long a preview lives after its last deploy; the gateway removes expired ones (PREVIEW_SWEEP_SECONDS). */
    PREVIEW_TTL_HOURS: z.coerce
      .number()
      .positive('must be positive')
      .max(24 * 365)
      .default(LIMITS.previewTtlHours),
    /** How often each gateway process removes expired previews (0: never). */
    PREVIEW_SWEEP_SECONDS: z.coerce.number().int().min(0).default(60),
    /** Upload limits; `GET /api/v1` publishes the values in force. */
    UPLOAD_MAX_BYTES: positiveInt(LIMITS.upload.maxUploadBytes),
    UPLOAD_MAX_FILES: positiveInt(LIMITS.upload.maxFiles),
    UPLOAD_MAX_FILE_BYTES: positiveInt(LIMITS.upload.maxFileBytes),
    UPLOAD_MAX_UNPACKED_BYTES: positiveInt(LIMITS.upload.maxUnpackedBytes),
    UPLOAD_MAX_COMPRESSION_RATIO: positiveInt(LIMITS.upload.maxCompressionRatio),
    /** Bytes of one PAX header / GNU long name in a tar, or of one zip entry's metadata. */
    UPLOAD_MAX_ARCHIVE_HEADER_BYTES: positiveInt(LIMITS.upload.maxArchiveHeaderBytes),
    /** Uploads in progress at once per application / per API key, counted in Redis (all replicas). */
    UPLOADS_PER_APPLICATION: positiveInt(LIMITS.upload.concurrentUploadsPerApplication),
    UPLOADS_PER_API_KEY: positiveInt(LIMITS.upload.concurrentUploadsPerApiKey),
    /** An upload that sends no byte for this long is dropped (`408 upload_stalled`). */
    UPLOAD_IDLE_TIMEOUT_SECONDS: positiveInt(LIMITS.upload.idleTimeoutSeconds),
    /** Storage quota per plan, `plan=size` pairs (`free=2GiB,pro=50GiB`); the build worker takes the same value. */
    STORAGE_QUOTAS: parsedBy(parseStorageQuotas),
    /** How far back an owner may restore their database, days by plan (`free=1,scale=60`; LIMITS.restoreWindowDaysPerPlan otherwise). */
    RESTORE_WINDOW_DAYS: parsedBy(parseRestoreWindows),
    /** Releases kept per application (the build worker prunes by its own RELEASES_KEPT: give both the same); published and shown. */
    RELEASES_KEPT: z.coerce.number().int().min(1, 'must keep at least 1 release').max(1000).default(LIMITS.releasesKeptPerApplication),
    /**
     * Development and tests only, as the sign-in service's variable of the same name: an owner may
     * give an OpenID Connect issuer over http or on an internal address (refused otherwise).
     */
    AUTH_OIDC_ALLOW_PRIVATE_ISSUERS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** The built dashboard served at `/` (default: apps/dashboard/dist beside this app). */
    DASHBOARD_DIR: z
      .string()
      .min(1)
      .default(fileURLToPath(new URL('../../dashboard/dist', import.meta.url))),
    /** How long an owner stays signed in to the dashboard. */
    OWNER_SESSION_DAYS: positiveInt(30),
    /** bcrypt cost of owner passwords (tests lower it; 12 ≈ a quarter second per sign-in here). */
    BCRYPT_ROUNDS: z.coerce.number().int().min(4).max(15).default(12),
    /**
     * Owners' dashboard sign-in limits (docs/decisions/owner-sign-in-limits.md); counters live in Redis under
     * `<QUEUE_PREFIX>:owner-sign-in:` so every gateway process and replica shares them.
     */
    OWNER_SIGN_IN_ACCOUNT_MAX_FAILURES: positiveInt(LIMITS.ownerSignIn.accountMaxFailures),
    OWNER_SIGN_IN_ACCOUNT_WINDOW_SECONDS: positiveInt(LIMITS.ownerSignIn.accountWindowSeconds),
    OWNER_SIGN_IN_ACCOUNT_LOCK_SECONDS: positiveInt(LIMITS.ownerSignIn.accountLockSeconds),
    OWNER_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS: positiveInt(LIMITS.ownerSignIn.accountMaxLockSeconds),
    OWNER_SIGN_IN_ADDRESS_MAX_FAILURES: positiveInt(LIMITS.ownerSignIn.addressMaxFailures),
    OWNER_SIGN_IN_ADDRESS_WINDOW_SECONDS: positiveInt(LIMITS.ownerSignIn.addressWindowSeconds),
    /** Owner password hashes (sign-in and sign-up) computed at once per process; the rest wait, then `sign_in_busy`. */
    OWNER_PASSWORD_CHECKS_MAX: positiveInt(LIMITS.ownerSignIn.maxConcurrentPasswordChecks),
    OWNER_PASSWORD_CHECK_WAIT_MS: positiveInt(LIMITS.ownerSignIn.passwordCheckWaitMs),
    /**
     * Reverse proxies in front of the gateway (comma-separated IP addresses) whose X-Forwarded-For
     * is believed for the sign-in limits. Empty (default): the peer address counts, XFF is ignored.
     */
    GATEWAY_TRUSTED_PROXIES: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .refine((list) => list.every((ip) => isIP(ip.startsWith('::ffff:') ? ip.slice(7) : ip) !== 0), 'must be comma-separated IP addresses'),
    /**
     * A role on the Postgres server of application databases that may create roles and databases
     * (switching sign-in on creates one). Default: DATABASE_URL (the platform's own server).
     */
    APP_DATABASES_ADMIN_URL: postgresUrl.optional(),
    /** Each application role's CONNECTION LIMIT on the server (its app through PgBouncer plus the sign-in service's pool). */
    APP_DATABASE_CONNECTION_LIMIT: positiveInt(10),
    /**
     * The platform's PgBouncer (set by `pnpm start`): the directory of its auth_file and databases
     * (0700) and its admin console. Set both or neither; when set, every database provisioned is
     * made known to PgBouncer (RELOAD) before the call answers, or the call fails.
     */
    APP_DATABASES_POOLER_DIR: z.string().min(1).optional(),
    APP_DATABASES_POOLER_ADMIN_URL: postgresUrl.optional(),
    /**
     * DNS servers that check custom-domain TXT records, comma separated (`ip`, `ip:port`,
     * `[ipv6]:port`). Default: the system resolver. Tests point it at a local server.
     */
    SLIPWAY_DNS_SERVERS: dnsServers,
    /**
     * Verified custom domains are looked up again this often (docs/decisions/custom-domain-verification.md); one
     * gateway replica checks each due claim (claimed in Postgres), at most 20 per tick.
     */
    DOMAIN_RECHECK_INTERVAL_MS: positiveInt(60 * 60_000),
    /** Re-checks in a row that find the record gone or wrong before the domain is unverified (route and certificate dropped). */
    DOMAIN_RECHECK_FAILURES: positiveInt(3),
    /**
     * The edge's internal API (as the build worker's EDGE_INTERNAL_URL): a rollback or promote asks
     * it to start the release and waits until it is healthy before the release becomes live, and the
     * owners' API reads the apps' runtime logs from it.
     */
    EDGE_INTERNAL_URL: httpUrl('http://127.0.0.1:8080'),
    /** How long a rollback/promote waits for the edge to report the release healthy (as the worker's RELEASE_TIMEOUT_MS). */
    RELEASE_TIMEOUT_MS: positiveInt(60_000),
    /**
     * Log follows (server-sent event streams: runtime-log tail and live build output together) open
     * at once per application, counted in each gateway process (N processes allow N × this); one
     * more → `429 rate_limited` before its stream opens (src/logs/follow-slots.ts).
     */
    LOG_FOLLOWS_PER_APPLICATION: positiveInt(20),
  })
  .superRefine(checkBlobStorage)
  .superRefine((config, ctx) => {
    // Under `pnpm start` the launcher runs GATEWAY_PROCESSES independent processes on a socket it
    // holds; a node:cluster primary on top of that would be a second, weaker supervisor.
    if (config.GATEWAY_WORKERS > 1 && config.SLIPWAY_LISTEN_FDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['GATEWAY_WORKERS'],
        message: 'cannot be above 1 on a socket handed down by the launcher (SLIPWAY_LISTEN_FDS): set GATEWAY_PROCESSES for `pnpm start` instead',
      });
    }
    if (Boolean(config.APP_DATABASES_POOLER_DIR) !== Boolean(config.APP_DATABASES_POOLER_ADMIN_URL)) {
      ctx.addIssue({
        code: 'custom',
        path: ['APP_DATABASES_POOLER_ADMIN_URL'],
        message: 'APP_DATABASES_POOLER_DIR and APP_DATABASES_POOLER_ADMIN_URL go together: set both or neither',
      });
    }
  });

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** The admin URL of the application databases' server. */
export function appDatabasesAdminUrl(config: GatewayConfig): string {
  return config.APP_DATABASES_ADMIN_URL ?? config.DATABASE_URL;
}

/** The only place this app reads the environment. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(gatewayConfigSchema, env);
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** The upload limits in force (defaults from the contract, overridable per installation). */
export function uploadLimits(config: GatewayConfig): UploadLimits {
  return {
    ...LIMITS.upload,
    maxUploadBytes: config.UPLOAD_MAX_BYTES,
    maxFiles: config.UPLOAD_MAX_FILES,
    maxFileBytes: config.UPLOAD_MAX_FILE_BYTES,
    maxUnpackedBytes: config.UPLOAD_MAX_UNPACKED_BYTES,
    maxCompressionRatio: config.UPLOAD_MAX_COMPRESSION_RATIO,
    maxArchiveHeaderBytes: config.UPLOAD_MAX_ARCHIVE_HEADER_BYTES,
    concurrentUploadsPerApplication: config.UPLOADS_PER_APPLICATION,
    concurrentUploadsPerApiKey: config.UPLOADS_PER_API_KEY,
    idleTimeoutSeconds: config.UPLOAD_IDLE_TIMEOUT_SECONDS,
  };
}

/** The owner sign-in limits in force (defaults from the contract, overridable per installation). */
export function ownerSignInLimits(config: GatewayConfig): OwnerSignInLimits {
  return {
    accountMaxFailures: config.OWNER_SIGN_IN_ACCOUNT_MAX_FAILURES,
    accountWindowSeconds: config.OWNER_SIGN_IN_ACCOUNT_WINDOW_SECONDS,
    accountLockSeconds: config.OWNER_SIGN_IN_ACCOUNT_LOCK_SECONDS,
    accountMaxLockSeconds: Math.max(config.OWNER_SIGN_IN_ACCOUNT_MAX_LOCK_SECONDS, config.OWNER_SIGN_IN_ACCOUNT_LOCK_SECONDS),
    addressMaxFailures: config.OWNER_SIGN_IN_ADDRESS_MAX_FAILURES,
    addressWindowSeconds: config.OWNER_SIGN_IN_ADDRESS_WINDOW_SECONDS,
    maxConcurrentPasswordChecks: config.OWNER_PASSWORD_CHECKS_MAX,
    passwordCheckWaitMs: config.OWNER_PASSWORD_CHECK_WAIT_MS,
  };
}
