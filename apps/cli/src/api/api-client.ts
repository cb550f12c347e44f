import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { ApiError, UnreachableError } from './api-error.js';

export interface RequestOptions {
  /** Bearer credential; each command picks the API key or the owner token. */
  bearer: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

/**
 * The platform's HTTP API as the CLI uses it: JSON in and out, every refusal turned into an
 * `ApiError` carrying the stable code, every connection failure into an `UnreachableError`.
 */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async json<T>(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, options: RequestOptions): Promise<T> {
    const response = await this.request(method, path, options);
    return (await response.json()) as T;
  }

  async text(method: 'GET', path: string, options: RequestOptions): Promise<string> {
    return (await this.request(method, path, options)).text();
  }

  /** Any request; resolves only on a 2xx answer. `init` may carry a streamed body. */
  async request(method: string, path: string, options: RequestOptions, init: RequestInit & { duplex?: 'half' } = {}): Promise<Response> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: `Bearer ${options.bearer}`, accept: 'application/json', ...options.headers };
    let body = init.body;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let response: Response;
    try {
      response = await fetch(url, { ...init, method, headers, body });
    } catch (error) {
      throw new UnreachableError(`cannot reach the platform at ${this.baseUrl} (${describeFetchError(error)}); is it running? Set --url or SLIPWAY_URL`);
    }
    if (!response.ok) throw await ApiError.fromResponse(response);
    return response;
  }
}

/**
 * Streams `body` as the request body with node:http and answers the parsed JSON of a 2xx reply.
 * Not fetch: Node 20's fetch keeps every chunk of a streamed request body reachable until the
 * request ends (bench/cli-upload measured RSS growing with the upload), node:http does not.
 * A reply that arrives before the body is sent (409, 429, 401, too_large) stops the upload.
 */
export function uploadStream<T>(baseUrl: string, path: string, options: RequestOptions, body: Readable): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const url = new URL(`${baseUrl}${path}`);
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.bearer}`, accept: 'application/json', ...options.headers },
    });
    let answered = false;
    request.on('response', (response: IncomingMessage) => {
      answered = true;
      body.unpipe(request);
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        request.destroy();
        body.destroy();
        const reply = new Response(Buffer.concat(chunks), { status: response.statusCode ?? 500, statusText: response.statusMessage ?? '' });
        if (reply.ok) resolve(reply.json() as Promise<T>);
        else ApiError.fromResponse(reply).then(reject, reject);
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // Once the platform has answered, a reset while we were still sending is expected.
      if (answered) return;
      body.destroy();
      reject(error.code ? new UnreachableError(`cannot reach the platform at ${baseUrl} (${error.code}); is it running? Set --url or SLIPWAY_URL`) : error);
    });
    body.on('error', (error) => {
      request.destroy();
      if (!answered) reject(error);
    });
    body.pipe(request);
  });
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
