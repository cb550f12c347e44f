/**
 * Asking a running platform what a test asks it, by port: shared by LaunchedPlatform and the fault
 * suite's platform of separately started services (tools/faults).
 */
import { request } from 'node:http';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request through the edge; `host`: the Host header (default: the application's own name). */
export interface EdgeRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  host?: string;
  timeoutMs?: number;
}

/** A request to 127.0.0.1:`port` under another Host (fetch() would drop the header); status 0 when nothing answers. */
export function requestByHost(
  port: number,
  path: string,
  { method = 'GET', headers = {}, body, host, timeoutMs = 10_000 }: EdgeRequest & { host: string },
): Promise<HttpResult> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { ...headers, host }, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', () => resolve({ status: 0, headers: {}, body: 'response aborted' }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve({ status: 0, headers: {}, body: error.message }));
    req.end(body);
  });
}

/** Status of `/health/ready` on `port` (0 when nothing answers within two seconds). */
export async function readyStatus(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}

/** A deployment's task as `GET /api/v1/deployments/:id` reports it to the application's API key (throws unless 200). */
export async function deploymentTask<T>(gatewayPort: number, apiKey: string, id: string): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${gatewayPort}/api/v1/deployments/${id}`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(5000),
  });
  if (response.status !== 200) throw new Error(`task ${id}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
