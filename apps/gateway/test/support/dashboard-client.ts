import { send, type HttpResult } from './http.js';

export const DASHBOARD_ORIGIN = 'http://localhost:3000';

/** A browser-like dashboard client: keeps the session cookie and sends Origin + the CSRF header. */
export class DashboardClient {
  cookie: string | null = null;

  constructor(private readonly baseUrl: string) {}

  request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { origin: DASHBOARD_ORIGIN, 'x-slipway-csrf': '1' },
  ): Promise<HttpResult> {
    const all: Record<string, string> = { ...(method === 'GET' ? {} : headers) };
    if (body !== undefined) all['content-type'] = 'application/json';
    if (this.cookie) all['cookie'] = this.cookie;
    return send(`${this.baseUrl}/dashboard/api${path}`, {
      method,
      headers: all,
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    }).then((res) => {
      const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('slipway_session='));
      if (setCookie) this.cookie = setCookie.split(';')[0]!.endsWith('=') ? null : setCookie.split(';')[0]!;
      return res;
    });
  }

  get = (path: string) => this.request('GET', path);
  post = (path: string, body?: unknown) => this.request('POST', path, body ?? {});
  put = (path: string, body: unknown) => this.request('PUT', path, body);
  patch = (path: string, body: unknown) => this.request('PATCH', path, body);
  delete = (path: string) => this.request('DELETE', path);

  async signUp(email: string, password = 'correct horse battery'): Promise<HttpResult> {
    return this.post('/session/sign-up', { email, password, name: 'Ada' });
  }
}
