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

  async json<T>(method: 'GET' | 'PUT' | 'POST', path: string, options: RequestOptions): Promise<T> {
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

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
