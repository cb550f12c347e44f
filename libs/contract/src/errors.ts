/**
 * Every error code the platform API returns, with its HTTP status and meaning. The single
 * source for the exception filters and for `GET /api/v1`.
 */
export const ERROR_CODES = {
  empty: { status: 400, meaning: 'No files and no archive were sent, or the archive holds no regular files.' },
  bad_request: {
    status: 400,
    meaning:
      'The request is malformed: not multipart, both archive and files, an unknown or repeated field, an unsafe or duplicate path, a `rootDirectory` that is not a relative directory (`apps/web`), or invalid JSON.',
  },
  bad_archive: {
    status: 400,
    meaning:
      'The archive is corrupt or unsupported, or has an entry that is a hard link, device or FIFO, absolute, escapes the root, lies below a symbolic link, or is a symbolic link that does not stay inside the project (an absolute target, a `..` above the project, a chain of links doing either, a loop).',
  },
  paths_mismatch: { status: 400, meaning: 'The number of `files` fields differs from the number of `paths` fields and no `archive` was sent.' },
  password_too_long: {
    status: 400,
    meaning: 'Dashboard: the password is longer than 72 bytes (UTF-8). It is refused, never cut short: bcrypt reads only the first 72 bytes.',
  },
  too_large: {
    status: 400,
    meaning:
      'The upload exceeds a published limit (total size, file count, file size, decompressed size, compression ratio, or an archive metadata record such as a PAX header or GNU long name larger than `maxArchiveHeaderBytes`), or secrets exceed their count or size limits.',
  },
  unauthorized: { status: 401, meaning: 'The API key or token is missing, malformed, unknown or revoked.' },
  forbidden: { status: 403, meaning: 'The credential is valid but may not do this.' },
  database_limit_reached: { status: 403, meaning: "The owner's plan allows no more application databases." },
  preview_limit_reached: {
    status: 403,
    meaning: "Owners' API: the owner's plan allows no more previews at once (`previewsPerPlan`, all its applications counted); delete one or let one expire.",
  },
  not_found: { status: 404, meaning: 'No such resource is visible to this credential.' },
  upload_stalled: { status: 408, meaning: 'The upload sent no byte for `idleTimeoutSeconds`; it was dropped and nothing of it was kept.' },
  deploy_in_progress: { status: 409, meaning: 'A deploy of this application is already queued, building or releasing; the body carries its `taskId`.' },
  restore_in_progress: {
    status: 409,
    meaning: "Owners' API: a restore of this application's database is already queued or running; the body carries its `restoreId`.",
  },
  email_taken: { status: 409, meaning: 'Dashboard: an owner account with this email already exists.' },
  domain_taken: {
    status: 409,
    meaning: 'Dashboard: this domain is verified by another application whose TXT record is still in place, or this application already claims it.',
  },
  storage_quota_exceeded: {
    status: 413,
    meaning:
      "The owner's applications already store as much as its plan allows (`storagePerPlan`: compressed sources of deployments in progress plus the artifacts of kept releases), or this upload would take it over; the body carries `usedBytes` and `quotaBytes`. Nothing of the upload is kept. A deploy whose built artifact would exceed it fails with the same code.",
  },
  domain_unverified: {
    status: 422,
    meaning:
      'Dashboard: the TXT record `_slipway-challenge.<domain>` = `slipway-verify=<token>` of this claim was not found (missing, wrong value, or the DNS lookup failed); the body carries the expected `record` and the values `found`.',
  },
  restore_point_unavailable: {
    status: 422,
    meaning:
      "Owners' API (database restore): the time asked for is not covered: in the future, before the earliest base backup kept, or further back than the plan's restore window (`restoreWindowDaysPerPlan`); the body carries `earliest` and `latest`.",
  },
  release_unhealthy: {
    status: 422,
    meaning:
      "Owners' API (rollback, promote): the release did not become healthy when the edge started it; the live release keeps serving. The message carries the start's log tail.",
  },
  auth_owned_by_project: { status: 409, meaning: 'The project set its own SERVICE_AUTH_BASE_URL or DATABASE_URL, so the platform leaves sign-in alone.' },
  rate_limited: {
    status: 429,
    meaning:
      "The hourly deploy limit is exceeded, or (owners' API) the application already has as many log streams open as allowed (`LOG_FOLLOWS_PER_APPLICATION`), or asked for more database restores or restore points this hour than allowed (`restoresPerHour`, `restorePointsPerHour`); the body carries `retryAfterSeconds`, the `Retry-After` header the same.",
  },
  too_many_uploads: {
    status: 429,
    meaning:
      'As many uploads as allowed (`concurrentUploadsPerApplication`, `concurrentUploadsPerApiKey`) are already in progress for this application or API key; the body carries `retryAfterSeconds`, the `Retry-After` header the same.',
  },
  too_many_sign_in_attempts: {
    status: 429,
    meaning:
      'Dashboard sign-in: too many failed attempts for this account or from this address; the `Retry-After` header and `retryAfterSeconds` say when to try again (the right password is refused too until then).',
  },
  internal: { status: 500, meaning: 'An unexpected failure; the body carries a `correlationId` to quote when reporting it.' },
  unavailable: { status: 503, meaning: 'A dependency (Postgres or Redis) is not answering; nothing was accepted, retry shortly.' },
  sign_in_busy: {
    status: 503,
    meaning: 'Dashboard sign-in/sign-up: the server is already checking as many passwords as it allows at once; retry after `Retry-After` seconds.',
  },
  database_pooler_unavailable: {
    status: 503,
    meaning:
      "Switching sign-in on: the application's database exists, but the platform's connection pooler (PgBouncer, the only way an application reaches its database) could not be told about it; call again.",
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The `documentation` URL in every error body points back to the contract. */
export function documentationUrl(baseUrl: string, code?: ErrorCode): string {
  return `${baseUrl.replace(/\/+$/, '')}/api/v1${code ? `#error-${code}` : ''}`;
}

/** The body of every deployment-API error: `{error, code, documentation}` plus extras. */
export interface ApiErrorBody {
  error: string;
  code: ErrorCode;
  documentation: string;
  [extra: string]: unknown;
}
