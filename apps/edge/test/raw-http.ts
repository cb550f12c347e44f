import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Writes `path` on the request line byte for byte (UTF-8), whatever it holds — tabs, backslashes,
 * raw Unicode — as a hostile client would (node:http refuses to send such paths), and reads the
 * answer up to the close. A server that refuses the request line answers 400 or closes.
 */
export function rawGet(port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer to GET ${JSON.stringify(path)}`)), 15_000);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.on('connect', () => socket.write(Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`, 'utf8')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return resolve({ status: 0, headers: {}, body: all });
      const [statusLine, ...lines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers: parsed, body: all.subarray(end + 4) });
    });
  });
}

/** A well-formed request through node:http, the body kept as bytes (compressed bodies are compared after decoding). */
export function get(
  port: number,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawReply & { rawHeaders: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
        resolve({ status: res.statusCode!, headers, rawHeaders: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
