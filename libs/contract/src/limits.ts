const MiB = 1024 * 1024;

/** Published limits (`GET /api/v1` lists them). */
export const LIMITS = {
  deploysPerHourPerApplication: 20,
  concurrentDeploysPerApplication: 1,
  signInAttemptsPer10Seconds: 9,
  /**
   * Owners' dashboard sign-in (`POST /dashboard/api/session/sign-in`): the defaults; the gateway
   * publishes the values in force. Failures count per account (email, trimmed and lower-cased, known
   * or not) and per client address (IPv6: per /64). See docs/decisions/owner-sign-in-limits.md.
   */
  ownerSignIn: {
    /** Failed attempts per account within `accountWindowSeconds` before the account is locked. */
    accountMaxFailures: 10,
    accountWindowSeconds: 15 * 60,
    /** First lock; each further lock within 24 h doubles it, up to `accountMaxLockSeconds`. */
    accountLockSeconds: 15 * 60,
    accountMaxLockSeconds: 60 * 60,
    /** Failed attempts per client address (any accounts) within `addressWindowSeconds`. */
    addressMaxFailures: 50,
    addressWindowSeconds: 15 * 60,
    /** Password hashes (sign-in and sign-up) one gateway process computes at once; others wait. */
    maxConcurrentPasswordChecks: 1,
    /** How long a sign-in or sign-up waits for a free slot before `sign_in_busy`. */
    passwordCheckWaitMs: 2000,
  },
  /** Owner passwords: UTF-8 bytes at most (bcrypt's input limit; longer is refused, never cut). */
  ownerPassword: { minLength: 10, maxBytes: 72 },
  databasesPerPlan: { free: 1, go: 1, pro: 3, scale: 5 },
  /**
   * Previews one owner may have at once, by plan, all its applications counted (a preview is an
   * application with its own runtime and address); one more is refused with `preview_limit`.
   * An expired preview is removed (and stops counting) within a minute or so.
   */
  previewsPerPlan: { free: 3, go: 10, pro: 50, scale: 200 },
  /**
   * How far back an owner may restore their application's database to a point in time, by plan
   * (days). The platform keeps base backups and WAL for BACKUP_RETENTION_DAYS (the launcher's,
   * default 7): a window longer than that reaches only as far as what is kept.
   */
  restoreWindowDaysPerPlan: { free: 1, go: 3, pro: 7, scale: 30 },
  /**
   * Restores one application may ask for per hour, and restore points it may mark: a restore
   * replays the whole server in a scratch copy (the platform's CPU and disk), one at a time for
   * everyone, so one tenant must not queue them back to back. More → 429 `rate_limited`.
   */
  restoresPerHour: 4,
  restorePointsPerHour: 30,
  /** How long a preview lives after its last deploy (`PREVIEW_TTL_HOURS` on the gateway). */
  previewTtlHours: 7 * 24,
  /**
   * Bytes one owner may store, by plan: the compressed sources of deployments in progress and the
   * artifacts of every kept release of all its applications. A deploy that would exceed it is
   * refused with `storage_quota_exceeded` (the gateway before and after the upload, the build
   * worker once the artifact is packed). The defaults; the operator changes them with
   * `STORAGE_QUOTAS` (`free=2GiB,pro=50GiB`), and the gateway publishes the values in force.
   */
  storagePerPlan: { free: 1024 * MiB, go: 5 * 1024 * MiB, pro: 20 * 1024 * MiB, scale: 100 * 1024 * MiB },
  /**
   * Releases kept per application (their artifacts in blob storage, their unpacked trees on the
   * edges), the live one and the newest successful ones; older ones are removed after each
   * successful release and can no longer be rolled back to. `RELEASES_KEPT` changes it.
   */
  releasesKeptPerApplication: 10,
  /** `POST /api/v1/deploy`: the defaults; the gateway publishes the values it enforces. */
  upload: {
    /** Bytes of the whole multipart request (files or archive, as sent). */
    maxUploadBytes: 256 * MiB,
    /** Regular files in the source (files fields, or archive entries). */
    maxFiles: 10_000,
    /** Bytes of one file, after decompression. */
    maxFileBytes: 100 * MiB,
    /** Bytes of all files together, after decompression. */
    maxUnpackedBytes: 1024 * MiB,
    /** Unpacked bytes per archive byte, checked once more than `compressionRatioFloorBytes` are unpacked. */
    maxCompressionRatio: 100,
    compressionRatioFloorBytes: 16 * MiB,
    /** UTF-8 bytes of one path, bytes of one path segment, and segments per path. */
    maxPathBytes: 1024,
    maxPathSegmentBytes: 255,
    maxPathDepth: 64,
    /**
     * Bytes of one archive metadata record: a tar extended header (PAX `x`/`g`) or GNU long
     * name (`L`/`K`), refused as soon as its header declares more (before its body is read);
     * for zip, a central-directory record's name + extra field + comment.
     */
    maxArchiveHeaderBytes: 64 * 1024,
    /** Uploads in progress at once, per application and per API key (`429 too_many_uploads`). */
    concurrentUploadsPerApplication: 2,
    concurrentUploadsPerApiKey: 2,
    /** Seconds an upload may go without a byte before it is dropped (`408 upload_stalled`). */
    idleTimeoutSeconds: 20,
  },
  /**
   * Node.js majors a project may declare (`engines.node`, `.nvmrc`, `.node-version`); builds and
   * the running release use the exact version chosen (libs/toolchains). A declaration no
   * supported major satisfies fails the deploy with `node_version_unsupported`.
   * `defaultMajor`: the Node of a project that declares none — the current Active LTS (24;
   * Node 20 reached end-of-life in April 2026), its newest release from the verified toolchain cache.
   * `endOfLife`: supported majors past their end of life (no more security fixes), with the date;
   * a project whose declaration allows nothing newer runs on one with the warning `node_end_of_life`.
   */
  node: { supportedMajors: [20, 22, 24], defaultMajor: 24, endOfLife: { 20: '2026-04-30' } as Readonly<Record<number, string>> },
  /**
   * Every install and build command runs in a cgroup of its own (build worker: BUILD_MEMORY_MB,
   * BUILD_PIDS, BUILD_CPUS, BUILD_CPUS_TOTAL, BUILD_CPU_WEIGHT): the defaults, for a 2-core machine.
   * `cpuWeight` is on cgroup v2's scale, where apps have the default 100: builds yield to them.
   * A command whose peak memory reaches `memoryWarnPercent` of the limit gets a warning.
   */
  build: { memoryMb: 2048, tasks: 1024, cpus: 1.5, cpuWeight: 25, memoryWarnPercent: 80 },
  /** `PUT /api/v1/secrets`. */
  secrets: {
    maxSecretsPerApplication: 200,
    maxNameLength: 128,
    maxValueBytes: 32 * 1024,
    /** Bytes of one `PUT /api/v1/secrets` JSON body (the server's JSON body limit). */
    maxRequestBytes: 100 * 1024,
  },
} as const;

export type PlanName = keyof typeof LIMITS.databasesPerPlan;
export const PLANS = Object.keys(LIMITS.databasesPerPlan) as PlanName[];
export type StorageQuotas = Record<PlanName, number>;

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: MiB, gib: 1024 * MiB, tib: 1024 * 1024 * MiB };

/**
 * `STORAGE_QUOTAS`: `plan=size` pairs, comma separated (`free=2GiB,pro=50GiB`; sizes in bytes or
 * B/KiB/MiB/GiB/TiB); plans not named keep their default. Throws a message naming what is wrong.
 */
export function parseStorageQuotas(text: string | undefined): StorageQuotas {
  const quotas: StorageQuotas = { ...LIMITS.storagePerPlan };
  for (const pair of (text ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z]+)\s*=\s*(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(pair);
    const plan = match?.[1]?.toLowerCase() as PlanName | undefined;
    const unit = SIZE_UNITS[match?.[3]?.toLowerCase() ?? ''];
    if (!match || !plan || !PLANS.includes(plan) || unit === undefined) {
      throw new Error(`"${pair}" is not plan=size with a plan of ${PLANS.join(', ')} and a size such as 1073741824 or 1GiB`);
    }
    quotas[plan] = Math.floor(Number(match[2]) * unit);
  }
  return quotas;
}
export type RestoreWindows = Record<PlanName, number>;

/**
 * `RESTORE_WINDOW_DAYS`: `plan=days` pairs, comma separated (`free=2,scale=60`); plans not named
 * keep their default (`restoreWindowDaysPerPlan`). Throws a message naming what is wrong.
 */
export function parseRestoreWindows(text: string | undefined): RestoreWindows {
  const windows: RestoreWindows = { ...LIMITS.restoreWindowDaysPerPlan };
  for (const pair of (text ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z]+)\s*=\s*(\d+(?:\.\d+)?)$/i.exec(pair);
    const plan = match?.[1]?.toLowerCase() as PlanName | undefined;
    if (!match || !plan || !PLANS.includes(plan) || Number(match[2]) <= 0)
      throw new Error(`"${pair}" is not plan=days with a plan of ${PLANS.join(', ')} and a number of days above 0 such as 7 or 0.5`);
    windows[plan] = Number(match[2]);
  }
  return windows;
}
export type UploadLimits = { -readonly [K in keyof typeof LIMITS.upload]: number };
export type SecretLimits = { -readonly [K in keyof typeof LIMITS.secrets]: number };
export type OwnerSignInLimits = { -readonly [K in keyof typeof LIMITS.ownerSignIn]: number };
