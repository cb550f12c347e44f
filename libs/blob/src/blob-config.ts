import { z } from '@slipway/config';
import { isBlobKey } from './blob-store.js';

/** Blob storage settings after parsing (what `createBlobStore` takes, besides SLIPWAY_HOME). */
export interface BlobStorageSettings {
  /** Root of the local store; default `<SLIPWAY_HOME>/blobs`. Not with S3_ENDPOINT. */
  BLOB_DIR?: string | undefined;
  /** An S3-compatible endpoint, `http(s)://host[:port]`; when set, blobs go to S3, not to disk. */
  S3_ENDPOINT?: string | undefined;
  S3_BUCKET?: string | undefined;
  /** Signing region (default `us-east-1`, what most S3-compatible servers expect). */
  S3_REGION?: string | undefined;
  /** Both or neither; neither: the AWS SDK's default credential chain (AWS_* env, web identity, instance role). */
  S3_ACCESS_KEY_ID?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined;
  /** `http://host/bucket/key` addressing (default true); false for virtual-hosted `http://bucket.host/key`. */
  S3_FORCE_PATH_STYLE?: boolean | undefined;
  /** Keys are stored under `<S3_PREFIX>/`, so several installations can share a bucket. */
  S3_PREFIX?: string | undefined;
}

/** An empty variable (`S3_ENDPOINT=` in a compose file) counts as not set. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/**
 * The environment fields of blob storage, shared by every app that opens the store:
 * `z.object({...blobStorageFields, ...}).superRefine(checkBlobStorage)`.
 */
export const blobStorageFields = {
  BLOB_DIR: optional(z.string()),
  S3_ENDPOINT: optional(z.string()),
  S3_BUCKET: optional(z.string()),
  S3_REGION: optional(z.string()),
  S3_ACCESS_KEY_ID: optional(z.string()),
  S3_SECRET_ACCESS_KEY: optional(z.string()),
  S3_FORCE_PATH_STYLE: optional(z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).transform((v) => v === 'true' || v === '1')),
  S3_PREFIX: optional(z.string()),
};

export interface BlobStorageProblem {
  variable: keyof BlobStorageSettings;
  message: string;
}

// Lower-case letters, digits, dots and hyphens, 3-63 long (S3's bucket naming rules, simplified).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Everything wrong with a blob storage configuration, one entry per variable to fix. */
export function blobStorageProblems(config: BlobStorageSettings): BlobStorageProblem[] {
  const problems: BlobStorageProblem[] = [];
  const s3Variables = (['S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'S3_PREFIX'] as const).filter(
    (name) => config[name] !== undefined,
  );
  if (!config.S3_ENDPOINT) {
    if (s3Variables.length > 0)
      problems.push({
        variable: 'S3_ENDPOINT',
        message: `is required when ${s3Variables.join(', ')} ${s3Variables.length === 1 ? 'is' : 'are'} set (blobs go to S3 only with S3_ENDPOINT)`,
      });
    return problems;
  }
  const endpoint = parseUrl(config.S3_ENDPOINT);
  if (!endpoint || (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') || !endpoint.host) {
    problems.push({ variable: 'S3_ENDPOINT', message: 'must be an http:// or https:// URL' });
  } else if (endpoint.username || endpoint.password) {
    problems.push({ variable: 'S3_ENDPOINT', message: 'must not contain credentials; use S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY' });
  } else if (endpoint.search || endpoint.hash) {
    problems.push({ variable: 'S3_ENDPOINT', message: 'must not have a query or fragment' });
  }
  if (!config.S3_BUCKET) problems.push({ variable: 'S3_BUCKET', message: 'is required when S3_ENDPOINT is set' });
  else if (!BUCKET.test(config.S3_BUCKET))
    problems.push({ variable: 'S3_BUCKET', message: 'must be a bucket name: 3-63 lower-case letters, digits, dots or hyphens' });
  if ((config.S3_ACCESS_KEY_ID === undefined) !== (config.S3_SECRET_ACCESS_KEY === undefined)) {
    problems.push({
      variable: config.S3_ACCESS_KEY_ID === undefined ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY',
      message: 'must be set together with the other S3 key (or neither, for the default AWS credential chain)',
    });
  }
  if (config.S3_PREFIX !== undefined && !isBlobKey(config.S3_PREFIX.replace(/\/+$/, ''))) {
    problems.push({ variable: 'S3_PREFIX', message: 'must be /-separated segments of letters, digits, ".", "_" or "-" (e.g. slipway/production)' });
  }
  if (config.BLOB_DIR !== undefined) problems.push({ variable: 'BLOB_DIR', message: 'cannot be used with S3_ENDPOINT (blobs go to S3); unset one of them' });
  return problems;
}

/** For `superRefine`: reports each blob storage problem on its variable. */
export function checkBlobStorage(config: BlobStorageSettings, ctx: z.RefinementCtx): void {
  for (const problem of blobStorageProblems(config)) ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
