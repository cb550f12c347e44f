import { request } from 'node:http';

export interface RawResponse {
  status: number;
  setCookies: string[];
  body: string;
}

/** One HTTP request with its target sent byte for byte (fetch would normalise `/./`, `\` and the like first). */
export function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port: Number(port), method, path: target, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, setCookies: res.headers['set-cookie'] ?? [], body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${target}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A small seeded generator (mulberry32): the cookie property test is reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
