import crypto, { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | undefined>;
  status: number;
  body: unknown;
  type: string;
}
interface FilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<unknown>;
  putObject(object: { bucket: string; key: string; content: unknown; metadata: unknown }): Promise<{ size: number; md5: string }>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: unknown): Promise<{ size: number; md5: string }>;
}
interface S3rver {
  store: FilesystemStore;
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
  httpServer?: Server;
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  address?: string;
  port?: number;
  silent?: boolean;
  directory: string;
  configureBuckets?: { name: string }[];
  vhostBuckets?: boolean;
}) => S3rver;
// s3rver is CommonJS without types: loaded with require, typed here with only what is used.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

/**
 * An S3-protocol emulator on 127.0.0.1: the `s3rver` npm package (not AWS, not MinIO). It knows
 * one access key id, S3RVER, and refuses others (InvalidAccessKeyId), but it does not verify V4
 * signatures, so a wrong secret goes unnoticed. Gaps of s3rver 3.7 are filled here, each a plain
 * implementation of the S3 behaviour, so that what our store does is observable:
 * - AbortMultipartUpload and ListMultipartUploads (s3rver answers 405 / NotImplemented): an
 *   upload's parts live in `<dir>/<bucket>/._S3rver_uploads/<uploadId>/`; abort deletes that
 *   folder, list reads it. These two are not signature-checked.
 * - PutObject/UploadPart answer before the file is written (a race: a GET right after could read
 *   a short file) and a replaced object is truncated in place: both now write to a temporary file
 *   and rename it into place once it is closed, as S3 makes an object visible only when complete.
 * - ListObjectsV2 continuation tokens are DES-encrypted, which OpenSSL 3 only has in its legacy
 *   provider: `des` is mapped to 3DES with three equal keys, which is the same cipher.
 * `operations` records every S3 operation received, in order (`PutObject`, `UploadPart`, ...).
 */
export interface S3Emulator {
  endpoint: string;
  bucket: string;
  /** The environment that points Slipway's blob storage here (also valid `createBlobStore` settings). */
  env: S3EmulatorEnv;
  operations: string[];
  /** Multipart uploads started and neither completed nor aborted (ListMultipartUploads). */
  incompleteUploads(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface S3EmulatorEnv {
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
}

/** The one account s3rver knows. */
export const EMULATOR_KEY_ID = 'S3RVER';
export const EMULATOR_SECRET = 'S3RVER';

let desShimmed = false;
function shimDes(): void {
  if (desShimmed) return;
  desShimmed = true;
  const { createCipheriv, createDecipheriv } = crypto;
  const asTripleDes = (key: crypto.CipherKey) => Buffer.concat([Buffer.from(key as Buffer), Buffer.from(key as Buffer), Buffer.from(key as Buffer)]);
  Object.assign(crypto, {
    createCipheriv: (algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null, options?: never) =>
      algorithm === 'des' ? createCipheriv('des-ede3-cbc', asTripleDes(key), iv) : createCipheriv(algorithm, key, iv, options),
    createDecipheriv: (algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null, options?: never) =>
      algorithm === 'des' ? createDecipheriv('des-ede3-cbc', asTripleDes(key), iv) : createDecipheriv(algorithm, key, iv, options),
  });
}

export async function startS3Emulator(bucket = 'slipway-test'): Promise<S3Emulator> {
  shimDes();
  const directory = await mkdtemp(join(tmpdir(), 'slipway-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }], vhostBuckets: false });
  const operations: string[] = [];
  const uploadsDir = (name: string) => server.store.getResourcePath(name, undefined, 'uploads');

  server.middleware.unshift(async (ctx, next) => {
    const [, bucketName = '', ...keyParts] = ctx.path.split('/');
    const operation = operationOf(ctx.method, keyParts.join('/') !== '', ctx.query);
    operations.push(operation);
    if (operation === 'AbortMultipartUpload') {
      const uploadId = ctx.query['uploadId'] ?? '';
      const folder = join(uploadsDir(bucketName), uploadId);
      const known = /^[0-9a-f]+$/.test(uploadId) && (await stat(folder).catch(() => null)) !== null;
      if (known) await rm(folder, { recursive: true, force: true });
      ctx.status = known ? 204 : 404;
      if (!known) xml(ctx, `<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`);
      return;
    }
    if (operation === 'ListMultipartUploads') {
      const prefix = ctx.query['prefix'] ?? '';
      const uploads: string[] = [];
      for (const uploadId of (await readdir(uploadsDir(bucketName)).catch(() => [])).sort()) {
        const key = await readFile(join(uploadsDir(bucketName), uploadId, 'key'), 'utf8').catch(() => null);
        if (key !== null && key.startsWith(prefix))
          uploads.push(`<Upload><Key>${escapeXml(key)}</Key><UploadId>${uploadId}</UploadId><Initiated>${new Date().toISOString()}</Initiated></Upload>`);
      }
      ctx.status = 200;
      xml(
        ctx,
        `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${escapeXml(bucketName)}</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`,
      );
      return;
    }
    await next();
  });

  const store = server.store;
  store.putObject = async (object) => {
    const target = store.getResourcePath(object.bucket, object.key, 'object');
    const { size, md5 } = await writeCompletely(object.content, target);
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size, md5 };
  };
  store.putPart = async (bucketName, uploadId, partNumber, content) => {
    const partPath = join(uploadsDir(bucketName), uploadId, String(partNumber));
    const { size, md5 } = await writeCompletely(content, partPath);
    await writeFile(`${partPath}.md5`, md5);
    return { size, md5 };
  };

  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  const env: S3EmulatorEnv = { S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: EMULATOR_KEY_ID, S3_SECRET_ACCESS_KEY: EMULATOR_SECRET };
  const admin = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: EMULATOR_KEY_ID, secretAccessKey: EMULATOR_SECRET },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    bucket,
    env,
    operations,
    async incompleteUploads(prefix = '') {
      const listed = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
      return (listed.Uploads ?? []).map((upload) => upload.Key ?? '');
    },
    async close() {
      admin.destroy();
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function writeCompletely(content: unknown, target: string): Promise<{ size: number; md5: string }> {
  await mkdir(dirname(target), { recursive: true });
  const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
  const md5 = createHash('md5');
  let size = 0;
  const source = Buffer.isBuffer(content) ? Readable.from([content]) : (content as Readable);
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  try {
    await pipeline(source, meter, createWriteStream(temp));
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return { size, md5: md5.digest('hex') };
}

function operationOf(method: string, hasKey: boolean, query: Record<string, string | undefined>): string {
  const has = (name: string) => Object.prototype.hasOwnProperty.call(query, name);
  if (!hasKey) {
    if (method === 'GET' && has('uploads')) return 'ListMultipartUploads';
    if (method === 'GET') return query['list-type'] === '2' ? 'ListObjectsV2' : 'ListObjects';
    return `${method} bucket`;
  }
  if (method === 'POST' && has('uploads')) return 'CreateMultipartUpload';
  if (method === 'POST' && has('uploadId')) return 'CompleteMultipartUpload';
  if (method === 'PUT' && has('uploadId')) return 'UploadPart';
  if (method === 'DELETE' && has('uploadId')) return 'AbortMultipartUpload';
  const plain: Record<string, string> = { PUT: 'PutObject', GET: 'GetObject', HEAD: 'HeadObject', DELETE: 'DeleteObject' };
  return plain[method] ?? `${method} object`;
}

function xml(ctx: { type: string; body: unknown }, body: string): void {
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
