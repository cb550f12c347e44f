// s3rver ships no types; only what the tests use.
declare module 's3rver' {
  import type { Server } from 'node:http';
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
  export default class S3rver {
    constructor(options: { address?: string; port?: number; silent?: boolean; directory: string; configureBuckets?: { name: string }[]; vhostBuckets?: boolean });
    store: FilesystemStore;
    middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
    httpServer?: Server;
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
