import { ConfigError, loadConfig, z } from '@slipway/config';
import { LocalBlobStore, S3BlobStore, blobStorageFields, checkBlobStorage, createBlobStore } from './index.js';

const schema = z.object({ SLIPWAY_HOME: z.string().optional(), ...blobStorageFields }).superRefine(checkBlobStorage);
const s3 = { S3_ENDPOINT: 'http://127.0.0.1:9000', S3_BUCKET: 'slipway-blobs' };

describe('blob storage configuration', () => {
  it('is the local store with nothing set, and S3 with an endpoint and a bucket', () => {
    expect(loadConfig(schema, {})).toEqual({});
    expect(loadConfig(schema, { ...s3, S3_FORCE_PATH_STYLE: 'false', S3_PREFIX: 'slipway/prod' })).toEqual({
      ...s3,
      S3_FORCE_PATH_STYLE: false,
      S3_PREFIX: 'slipway/prod',
    });
    expect(createBlobStore(loadConfig(schema, { BLOB_DIR: '/data/blobs' }))).toBeInstanceOf(LocalBlobStore);
    expect(createBlobStore(loadConfig(schema, s3))).toBeInstanceOf(S3BlobStore);
  });

  it('treats empty variables (as compose files write them) as not set', () => {
    expect(loadConfig(schema, { S3_ENDPOINT: '', S3_BUCKET: '', S3_ACCESS_KEY_ID: '' })).toEqual({});
  });

  it('names the variable to fix in one line', () => {
    const cases: [Record<string, string>, string][] = [
      [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET: is required when S3_ENDPOINT is set (not set)'],
      [{ S3_BUCKET: 'b-1' }, 'S3_ENDPOINT: is required when S3_BUCKET is set (blobs go to S3 only with S3_ENDPOINT) (not set)'],
      [{ ...s3, S3_ENDPOINT: 'minio:9000' }, 'S3_ENDPOINT: must be an http:// or https:// URL (got "minio:9000")'],
      [{ ...s3, S3_BUCKET: 'My_Bucket' }, 'S3_BUCKET: must be a bucket name: 3-63 lower-case letters, digits, dots or hyphens (got "My_Bucket")'],
      [{ ...s3, S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE: must be true or false (got "yes")'],
      [{ ...s3, S3_PREFIX: '../up' }, 'S3_PREFIX: must be /-separated segments of letters, digits, ".", "_" or "-" (e.g. slipway/production) (got "../up")'],
      [{ ...s3, BLOB_DIR: '/data' }, 'BLOB_DIR: cannot be used with S3_ENDPOINT (blobs go to S3); unset one of them (got "/data")'],
    ];
    for (const [env, message] of cases) expect(() => loadConfig(schema, env)).toThrow(new ConfigError(message));
  });

  it('wants both S3 keys or neither, and never echoes them', () => {
    const attempt = () => loadConfig(schema, { ...s3, S3_SECRET_ACCESS_KEY: 'very-secret-value' });
    expect(attempt).toThrow(/^S3_ACCESS_KEY_ID: must be set together with the other S3 key/);
    expect(() => loadConfig(schema, { ...s3, S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' })).toThrow(/^S3_SECRET_ACCESS_KEY: must be set together/);
    expect(() => loadConfig(schema, { ...s3, S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', S3_SECRET_ACCESS_KEY: 'very-secret-value' })).not.toThrow();
    expect(attempt).not.toThrow(/very-secret-value/);
  });

  it('refuses credentials inside the endpoint URL without printing them', () => {
    const attempt = () => loadConfig(schema, { ...s3, S3_ENDPOINT: 'https://AKIAEXAMPLE:very-secret-value@s3.example.com' });
    expect(attempt).toThrow(/^S3_ENDPOINT: must not contain credentials; use S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/);
    expect(attempt).not.toThrow(/very-secret-value/);
  });

  it('is checked again by createBlobStore for callers that skip the schema', () => {
    expect(() => createBlobStore({ S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(new ConfigError('S3_BUCKET: is required when S3_ENDPOINT is set'));
  });
});
